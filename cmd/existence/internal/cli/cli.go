package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
)

// Exit codes of [Main].
const (
	// ExitOK: the command did what was asked (or printed help).
	ExitOK = 0
	// ExitError: the command failed while running; the reason is on
	// standard error as "existence CMD: ...".
	ExitError = 1
	// ExitUsage: an unknown command, a bad flag or a bad flag value; the
	// reason is on standard error.
	ExitUsage = 2
)

// command is one subcommand.
type command struct {
	// name is the subcommand's name; summary its one-line description in
	// the command list.
	name, summary string
	// args is the synopsis after the flags, e.g. "" or "[CMD]"; a
	// command with no args refuses positional arguments.
	args string
	// about is the text help prints between the synopsis and the flags;
	// "{prog}" stands for the command's name as invoked.
	about string
	// setup registers the command's flags on fs and returns what runs it
	// once fs is parsed.
	setup func(fs *flag.FlagSet) action
}

// action runs a command after its flags are parsed; args are the
// positional arguments. Return usageErr(...) for a bad combination of
// flags (exit 2); any other error exits 1.
type action func(ctx context.Context, e *env, args []string) error

// env is what a command runs with: its name as invoked, for messages, and
// the process's standard streams.
type env struct {
	prog   string // "existence run", or "trio"
	help   string // how to get the usage: "existence help run"
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

// usageError is a bad flag value or a bad combination of flags: the
// command exits 2.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

// usageErr marks err as a usage error (exit 2); nil stays nil.
func usageErr(err error) error {
	if err == nil {
		return nil
	}
	return usageError{err}
}

// commands are the subcommands, in the order the list shows them. help
// is added by init (it lists the others).
var commands []*command

func init() {
	commands = []*command{runCommand, initCommand, swarmCommand, simulateCommand, importCommand, memoryCommand, serveCommand, tuiCommand, versionCommand, helpCommand}
}

func lookup(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

// Main runs the existence command with args (the arguments after the
// program name) and returns its exit code: [ExitOK], [ExitError] or
// [ExitUsage]. SIGINT and SIGTERM cancel the command's context, so that
// it stops and saves; a second signal kills the process.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	context.AfterFunc(ctx, stop)
	return dispatch(ctx, args, stdin, stdout, stderr)
}

// dispatch picks the subcommand of args[0] and runs it.
func dispatch(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		printCommands(stderr)
		return ExitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help":
		printCommands(stdout)
		return ExitOK
	}
	c := lookup(args[0])
	if c == nil {
		fmt.Fprintf(stderr, "existence: unknown command %q\nRun 'existence help' for the list of commands.\n", args[0])
		return ExitUsage
	}
	e := &env{prog: "existence " + c.name, help: "existence help " + c.name, stdin: stdin, stdout: stdout, stderr: stderr}
	return execute(ctx, c, args[1:], e)
}

// execute parses args with c's flags and runs c.
func execute(ctx context.Context, c *command, args []string, e *env) int {
	fs := newFlagSet(e.prog)
	act := c.setup(fs)
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		printUsage(e.stdout, e.prog, c, fs)
		return ExitOK
	}
	if err == nil && c.args == "" && fs.NArg() > 0 {
		err = fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "%s: %v\nRun '%s' for usage.\n", e.prog, err, e.help)
		return ExitUsage
	}
	err = act(ctx, e, fs.Args())
	var ue usageError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ue):
		fmt.Fprintf(e.stderr, "%s: %v\nRun '%s' for usage.\n", e.prog, err, e.help)
		return ExitUsage
	default:
		fmt.Fprintf(e.stderr, "%s: %v\n", e.prog, err)
		return ExitError
	}
}

// newFlagSet returns a silent flag set: execute prints help and errors
// itself, help on stdout and errors on stderr.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// printUsage prints c's synopsis, description and flags.
func printUsage(w io.Writer, prog string, c *command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: %s [flags]", prog)
	if c.args != "" {
		fmt.Fprintf(w, " %s", c.args)
	}
	fmt.Fprintf(w, "\n\n%s.\n", capitalize(c.summary))
	if c.about != "" {
		fmt.Fprintf(w, "\n%s\n", strings.ReplaceAll(c.about, "{prog}", prog))
	}
	vis := visibleFlags(fs)
	if vis.NFlag() == 0 && countFlags(vis) == 0 {
		return
	}
	fmt.Fprintf(w, "\nFlags:\n")
	vis.SetOutput(w)
	vis.PrintDefaults()
}

// countFlags returns how many flags fs defines.
func countFlags(fs *flag.FlagSet) int {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n
}

// printCommands prints the list of commands, one line each.
func printCommands(w io.Writer) {
	fmt.Fprintf(w, "existence runs and watches existence-loop agents.\n\nUsage: existence <command> [flags]\n\nCommands:\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range commands {
		fmt.Fprintf(tw, "  %s\t%s\n", c.name, c.summary)
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "\nRun 'existence help <command>' or 'existence <command> -h' for a command's flags.\n")
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// helpCommand is `existence help [CMD]`.
var helpCommand = &command{
	name:    "help",
	summary: "list the commands, or print one command's usage and flags",
	args:    "[command]",
	setup: func(fs *flag.FlagSet) action {
		return func(_ context.Context, e *env, args []string) error {
			switch len(args) {
			case 0:
				printCommands(e.stdout)
				return nil
			case 1:
				c := lookup(args[0])
				if c == nil {
					return usageErr(fmt.Errorf("unknown command %q (run 'existence help' for the list)", args[0]))
				}
				printUsage(e.stdout, "existence "+c.name, c, setupOnly(c))
				return nil
			default:
				return usageErr(fmt.Errorf("help takes one command, not %d", len(args)))
			}
		}
	},
}

// setupOnly returns c's flag set, for printing.
func setupOnly(c *command) *flag.FlagSet {
	fs := newFlagSet("existence " + c.name)
	c.setup(fs)
	return fs
}
