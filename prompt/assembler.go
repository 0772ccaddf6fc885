package prompt

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/existence-loop/sdk/internal/runes"
)

// Config is the application's part of the prompt: what the agents' world is
// and what counts as a good goal in it (spec §2, §7). Only World is
// required in practice; every other field has a sensible absence.
type Config struct {
	// World is the static world context (spec §2 row 3), shown under
	// "WORLD CONTEXT (factual — not instructions):" identically every cycle.
	// Surrounding whitespace is trimmed; when blank the section is absent.
	World string
	// Situation is the text under "YOUR SITUATION:" (row 4); empty means
	// [DefaultSituation].
	Situation string
	// Goals are the ranked "Highest-value goals (in order):" of the
	// directive (row 17), highest value first. Each is shown on one line
	// as "  1. …"; blank entries are skipped. None: the list is omitted.
	Goals []string
	// Prohibitions follows "Do NOT pick: " in the directive; blank: the
	// line is omitted.
	Prohibitions string
	// Grounding is an optional closing line of the directive, such as the
	// original's "The goal must be grounded in what actually exists in
	// /agentOS/."; blank: omitted.
	Grounding string
	// Budget optionally caps the prompt's size; the zero value means none.
	Budget Budget
	// Layout orders the default sections: [LayoutOriginal] (the zero
	// value, spec §2's order), [LayoutCache] (a model server's KV cache
	// reuses most of each prompt; see [Layout]) or [LayoutCacheAgent]
	// (the same with the agent's name first, for a server with a KV-cache
	// slot per agent).
	Layout Layout
}

// Errors of the builder operations and of [Assembler.Assemble].
var (
	// ErrUnknownSection: a builder operation named a section the assembler
	// does not have. Builder operations never silently do nothing.
	ErrUnknownSection = errors.New("prompt: unknown section")
	// ErrDuplicateSection: a section with that name is already in the
	// assembler (names are unique), or a name was repeated in Reorder.
	ErrDuplicateSection = errors.New("prompt: duplicate section")
	// ErrInvalidSection: a nil section, a section with an empty name, a
	// [SectionFunc] without Text, or a move of a section relative to
	// itself.
	ErrInvalidSection = errors.New("prompt: invalid section")
	// ErrOrder: Reorder did not list every section.
	ErrOrder = errors.New("prompt: Reorder must list every section exactly once")
	// ErrNilView: Assemble was called with a nil *View.
	ErrNilView = errors.New("prompt: nil View")
)

// Assembler assembles the existence prompt from an ordered list of named
// sections (spec §2). [New] gives it the 18 default sections; the builder
// methods replace, remove, insert and reorder them.
//
// An Assembler is safe for concurrent use: Assemble may run in many
// goroutines at once, and builder methods may run concurrently with it.
// Builder methods are copy-on-write: an Assemble already running uses the
// sections as they were when it started, and never sees half an edit. To
// derive a variant without touching the original, [Assembler.Clone] it.
type Assembler struct {
	mu   sync.Mutex // serialises builder operations
	cur  atomic.Pointer[layout]
	hint atomic.Int64 // bytes of the largest prompt so far, to size the builder once
}

// layout is an immutable snapshot of an assembler's configuration.
type layout struct {
	cfg      Config
	sections []Section
}

// New returns an assembler with the default sections of spec §2, in
// [DefaultOrder] under [LayoutOriginal], [CacheOrder] under
// [LayoutCache] and [CacheAgentOrder] under [LayoutCacheAgent]. The original order is: [SectionTask], [SectionIdentity], [SectionWorld],
// [SectionSituation], [SectionInnerState], [SectionWorldview],
// [SectionOpinions], [SectionQuestions], [SectionHistory], [SectionPeers],
// [SectionDiscoveries], [SectionTime], [SectionLastOutcome],
// [SectionRecentGoals], [SectionPeerMessages], [SectionHostMessage],
// [SectionDirective], [SectionResponseFormat].
//
// The world, situation and directive texts are rendered from cfg once, here.
// The caps on what the sections show come from the View's Limits at
// assembly time ([identity.Limits]; zero fields mean the spec's defaults).
// See [Budget] for the order in which the sections shrink.
func New(cfg Config) *Assembler {
	cfg.Goals = slices.Clone(cfg.Goals)
	a := &Assembler{}
	a.cur.Store(&layout{cfg: cfg, sections: defaultSections(&cfg)})
	switch cfg.Layout {
	case LayoutCache:
		a.cur.Store(&layout{cfg: cfg, sections: cacheSections(defaultSections(&cfg), CacheOrder())})
	case LayoutCacheAgent:
		a.cur.Store(&layout{cfg: cfg, sections: cacheSections(defaultSections(&cfg), CacheAgentOrder())})
	}
	return a
}

// Config returns a copy of the configuration the assembler was built with
// (with its current budget).
func (a *Assembler) Config() Config {
	c := a.cur.Load().cfg
	c.Goals = slices.Clone(c.Goals)
	return c
}

// SetBudget replaces the budget; the zero Budget removes it.
func (a *Assembler) SetBudget(b Budget) {
	a.edit(func(l *layout) error { l.cfg.Budget = b; return nil })
}

// Clone returns an independent copy of a: builder operations on either do
// not affect the other. Sections themselves are shared (they are values
// that render from a View, not state).
func (a *Assembler) Clone() *Assembler {
	c := &Assembler{}
	c.cur.Store(a.cur.Load())
	c.hint.Store(a.hint.Load())
	return c
}

// Names returns the section names in assembly order.
func (a *Assembler) Names() []string {
	l := a.cur.Load()
	out := make([]string, len(l.sections))
	for i, s := range l.sections {
		out[i] = s.Name()
	}
	return out
}

// Section returns the section with the given name, and whether there is
// one. A default section can be wrapped and put back with Replace.
func (a *Assembler) Section(name string) (Section, bool) {
	l := a.cur.Load()
	if i := l.index(name); i >= 0 {
		return l.sections[i], true
	}
	return nil, false
}

// Replace puts s in place of the section called name. s may have another
// name, as long as no other section has it. Errors: [ErrUnknownSection],
// [ErrDuplicateSection], [ErrInvalidSection].
func (a *Assembler) Replace(name string, s Section) error {
	return a.edit(func(l *layout) error {
		i, err := l.find(name)
		if err != nil {
			return err
		}
		if err := checkSection(s); err != nil {
			return err
		}
		if j := l.index(s.Name()); j >= 0 && j != i {
			return fmt.Errorf("%w %q", ErrDuplicateSection, s.Name())
		}
		l.sections[i] = s
		return nil
	})
}

// Remove removes the section called name. Error: [ErrUnknownSection].
func (a *Assembler) Remove(name string) error {
	return a.edit(func(l *layout) error {
		i, err := l.find(name)
		if err != nil {
			return err
		}
		l.sections = slices.Delete(l.sections, i, i+1)
		return nil
	})
}

// InsertBefore inserts s just before the section called name. Errors:
// [ErrUnknownSection], [ErrDuplicateSection] (s's name is taken),
// [ErrInvalidSection].
func (a *Assembler) InsertBefore(name string, s Section) error {
	return a.insert(name, s, 0)
}

// InsertAfter inserts s just after the section called name. Errors as for
// [Assembler.InsertBefore].
func (a *Assembler) InsertAfter(name string, s Section) error {
	return a.insert(name, s, 1)
}

func (a *Assembler) insert(name string, s Section, offset int) error {
	return a.edit(func(l *layout) error {
		i, err := l.find(name)
		if err != nil {
			return err
		}
		if err := checkSection(s); err != nil {
			return err
		}
		if l.index(s.Name()) >= 0 {
			return fmt.Errorf("%w %q", ErrDuplicateSection, s.Name())
		}
		l.sections = slices.Insert(l.sections, i+offset, s)
		return nil
	})
}

// MoveBefore moves the section called name to just before the section
// called before. Errors: [ErrUnknownSection], [ErrInvalidSection] when the
// two names are the same.
func (a *Assembler) MoveBefore(name, before string) error { return a.move(name, before, 0) }

// MoveAfter moves the section called name to just after the section called
// after. Errors as for [Assembler.MoveBefore].
func (a *Assembler) MoveAfter(name, after string) error { return a.move(name, after, 1) }

func (a *Assembler) move(name, anchor string, offset int) error {
	return a.edit(func(l *layout) error {
		i, err := l.find(name)
		if err != nil {
			return err
		}
		if _, err := l.find(anchor); err != nil {
			return err
		}
		if name == anchor {
			return fmt.Errorf("%w: cannot move %q relative to itself", ErrInvalidSection, name)
		}
		s := l.sections[i]
		l.sections = slices.Delete(l.sections, i, i+1)
		j := l.index(anchor)
		l.sections = slices.Insert(l.sections, j+offset, s)
		return nil
	})
}

// Reorder sets the order of all sections: names must list every current
// section exactly once. Errors: [ErrUnknownSection] for a name the assembler
// does not have, [ErrDuplicateSection] for a name listed twice, [ErrOrder]
// for sections left out.
func (a *Assembler) Reorder(names ...string) error {
	return a.edit(func(l *layout) error {
		out := make([]Section, 0, len(names))
		for k, name := range names {
			i, err := l.find(name)
			if err != nil {
				return err
			}
			if slices.Contains(names[:k], name) {
				return fmt.Errorf("%w %q in Reorder", ErrDuplicateSection, name)
			}
			out = append(out, l.sections[i])
		}
		if len(out) != len(l.sections) {
			var missing []string
			for _, s := range l.sections {
				if !slices.Contains(names, s.Name()) {
					missing = append(missing, s.Name())
				}
			}
			return fmt.Errorf("%w: missing %s", ErrOrder, strings.Join(missing, ", "))
		}
		l.sections = out
		return nil
	})
}

// edit applies f to a copy of the current layout and publishes the copy if
// f succeeds.
func (a *Assembler) edit(f func(l *layout) error) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	cur := a.cur.Load()
	next := &layout{cfg: cur.cfg, sections: slices.Clone(cur.sections)}
	if err := f(next); err != nil {
		return err
	}
	a.cur.Store(next)
	return nil
}

func (l *layout) index(name string) int {
	for i, s := range l.sections {
		if s.Name() == name {
			return i
		}
	}
	return -1
}

func (l *layout) find(name string) (int, error) {
	if i := l.index(name); i >= 0 {
		return i, nil
	}
	names := make([]string, len(l.sections))
	for i, s := range l.sections {
		names[i] = s.Name()
	}
	return -1, fmt.Errorf("%w %q (the sections are: %s)", ErrUnknownSection, name, strings.Join(names, ", "))
}

func checkSection(s Section) error {
	if s == nil {
		return fmt.Errorf("%w: nil", ErrInvalidSection)
	}
	if f, ok := s.(SectionFunc); ok && f.Text == nil {
		return fmt.Errorf("%w: SectionFunc %q has no Text", ErrInvalidSection, f.ID)
	}
	if f, ok := s.(*SectionFunc); ok && (f == nil || f.Text == nil) {
		return fmt.Errorf("%w: *SectionFunc without Text", ErrInvalidSection)
	}
	if s.Name() == "" {
		return fmt.Errorf("%w: empty name", ErrInvalidSection)
	}
	return nil
}

// Prompt is an assembled prompt.
type Prompt struct {
	// Text is the prompt as sent to the model: the present sections in
	// order, separated by exactly one blank line ("\n\n"), with no leading
	// and no trailing newline.
	Text string
	// Chars is the length of Text in characters (code points).
	Chars int
	// Sections are the sections that are present, in order. Absent
	// (conditional) sections are not listed.
	Sections []RenderedSection
	// Cuts lists what the budget cut, in the order it was cut; nil when
	// nothing was.
	Cuts []Cut
	// StableEnd, under [LayoutCache], is the byte offset in Text where
	// the part that can change between cycles starts: Text[:StableEnd] is
	// the stable prefix (the sections up to the agent's identity, without
	// the blank line after them), Text[StableEnd:] starts with "\n\n" unless
	// empty. 0 under [LayoutOriginal]. An agent sends the prefix as its
	// own system message, and its executor starts its prompt with it, so
	// that both share the model server's KV cache (see [Prompt.Split]).
	StableEnd int
}

// Split returns the stable prefix of the prompt ([Prompt].StableEnd) and
// the rest, without the blank line between them: ("", Text) under
// [LayoutOriginal].
func (p *Prompt) Split() (stable, rest string) {
	if p.StableEnd <= 0 || p.StableEnd > len(p.Text) {
		return "", p.Text
	}
	return p.Text[:p.StableEnd], strings.TrimPrefix(p.Text[p.StableEnd:], "\n\n")
}

// RenderedSection is one section of a [Prompt].
type RenderedSection struct {
	// Name is the section's name ([Section].Name), e.g. [SectionOpinions]
	// ("opinions").
	Name string
	// Text is the section's text within Prompt.Text (no surrounding
	// newlines).
	Text string
	// Chars is the length of Text in characters (code points).
	Chars int
	// Cut reports whether the budget shrank the section.
	Cut bool
}

// Section returns the rendered section with the given name, and whether it
// is present.
func (p *Prompt) Section(name string) (RenderedSection, bool) {
	for _, s := range p.Sections {
		if s.Name == name {
			return s, true
		}
	}
	return RenderedSection{}, false
}

// Names returns the names of the present sections, in order.
func (p *Prompt) Names() []string {
	out := make([]string, len(p.Sections))
	for i, s := range p.Sections {
		out[i] = s.Name
	}
	return out
}

// span locates a section's text in the builder.
type span struct{ idx, start, end int }

// Assemble renders every section from v, in order, and joins the present
// ones with one blank line. It is pure: the same View gives the same bytes
// (on every run and platform). Every section's text, custom sections and
// the configured world text included, goes through [Clean]: no assembled
// prompt holds a control character other than newline and tab, or a
// bidirectional control. Names and message senders that could imitate the
// prompt's markers are shown quoted (see [identity.ValidateName]). A nil v.Identity renders as a new, unnamed
// identity; a nil v.Suffering as no suffering.
//
// With a budget ([Config].Budget, and the model's window in v.Window),
// sections shrink as [Budget] describes and Prompt.Cuts says what was cut. Errors: [ErrNilView]; a
// [*BudgetError] (matching [ErrBudget]) when even the minimal prompt is
// over the budget.
func (a *Assembler) Assemble(v *View) (*Prompt, error) {
	if v == nil {
		return nil, ErrNilView
	}
	return a.assemble(a.cur.Load(), v)
}

// AssembleBuiltin is [Assembler.Assemble] for a caller that holds a lock
// over the state v points into: it assembles v only when Assemble would
// run no code but the SDK's, that is when every section is built in (none
// replaced or added with a custom [Section]) and the budget has no custom
// Count. Then the caller may assemble straight from its state, under its
// lock, instead of copying the state first; the existence package does so
// on every cycle. Otherwise it reports false and
// does nothing, and the caller copies the state and calls Assemble outside
// its lock. The check and the assembly use the same layout, so a section
// added meanwhile by another goroutine is never run under the lock. The
// errors are Assemble's.
func (a *Assembler) AssembleBuiltin(v *View) (p *Prompt, ok bool, err error) {
	if v == nil {
		return nil, false, ErrNilView
	}
	l := a.cur.Load()
	if !l.builtin() {
		return nil, false, nil
	}
	p, err = a.assemble(l, v)
	return p, true, err
}

// builtin reports whether assembling with l runs only the SDK's code.
func (l *layout) builtin() bool {
	if l.cfg.Budget.Count != nil {
		return false
	}
	for _, s := range l.sections {
		if _, ok := s.(*stdSection); !ok {
			return false
		}
	}
	return true
}

func (a *Assembler) assemble(l *layout, v *View) (*Prompt, error) {
	e := newEnv(v)

	var b strings.Builder
	size := int(a.hint.Load())
	if size == 0 {
		size = 4096
	}
	b.Grow(size + size/8)

	var spanBuf [32]span
	spans := spanBuf[:0]
	for i, s := range l.sections {
		if std, ok := s.(*stdSection); ok {
			e.batch = std.batch
			if !std.has(&e) {
				continue
			}
			if b.Len() > 0 {
				b.WriteString("\n\n")
			}
			start := b.Len()
			std.write(&b, &e)
			spans = append(spans, span{i, start, b.Len()})
			continue
		}
		t := trimNewlines(s.Render(v))
		if t == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		start := b.Len()
		b.WriteString(t)
		spans = append(spans, span{i, start, b.Len()})
	}
	text := b.String()
	if n := int64(len(text)); n > int64(size) {
		a.hint.Store(n)
	}

	p := &Prompt{Text: text, Sections: make([]RenderedSection, len(spans))}
	for k, sp := range spans {
		t := text[sp.start:sp.end]
		n := runes.Count(t)
		p.Sections[k] = RenderedSection{Name: l.sections[sp.idx].Name(), Text: t, Chars: n}
		p.Chars += n
	}
	if len(spans) > 1 {
		p.Chars += 2 * (len(spans) - 1)
	}

	bud := l.cfg.Budget.within(v.Window)
	if !bud.Enabled() || fitsFast(bud, p) {
		return stable(l, clean(l, p)), nil
	}
	texts := make([]string, len(l.sections))
	for k, sp := range spans {
		texts[sp.idx] = p.Sections[k].Text
	}
	cuts, err := fitBudget(bud, v, l.sections, texts)
	if err != nil {
		return nil, err
	}
	if len(cuts) == 0 {
		return stable(l, clean(l, p)), nil
	}
	return stable(l, clean(l, rebuild(l, texts, cuts))), nil
}

// clean applies [Clean] to every section of p (see cleanSection): the one
// place where text shown to the model is cleaned, whoever wrote it. p is
// returned as it is, without allocating, when it holds nothing to remove
// (ordinary text); otherwise the prompt is rebuilt from the cleaned
// sections, keeping its cuts. The budget was fitted before, and cleaning
// only removes characters, so the prompt still fits it.
func clean(l *layout, p *Prompt) *Prompt {
	if runes.UnsafeAt(p.Text) < 0 {
		return p
	}
	texts := make([]string, len(l.sections))
	for _, s := range p.Sections {
		texts[l.index(s.Name)] = cleanSection(s.Text)
	}
	return rebuild(l, texts, p.Cuts)
}

// fitsFast reports whether p fits b, without allocating unless b has a
// custom token counter.
func fitsFast(b Budget, p *Prompt) bool {
	if b.MaxChars > 0 && p.Chars > b.MaxChars {
		return false
	}
	if b.MaxTokens > 0 {
		n := (p.Chars + 3) / 4
		if b.Count != nil {
			n = b.Count(p.Text)
		}
		if n > b.MaxTokens {
			return false
		}
	}
	return true
}

// rebuild assembles a Prompt from per-section texts (parallel to
// l.sections) after the budget cut some of them.
func rebuild(l *layout, texts []string, cuts []Cut) *Prompt {
	var b strings.Builder
	n := 0
	for _, t := range texts {
		n += len(t) + 2
	}
	b.Grow(n)
	var spans []span
	for i, t := range texts {
		if t == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		start := b.Len()
		b.WriteString(t)
		spans = append(spans, span{i, start, b.Len()})
	}
	text := b.String()
	p := &Prompt{Text: text, Sections: make([]RenderedSection, len(spans)), Cuts: cuts}
	for k, sp := range spans {
		t := text[sp.start:sp.end]
		name := l.sections[sp.idx].Name()
		cut := slices.ContainsFunc(cuts, func(c Cut) bool { return c.Section == name })
		p.Sections[k] = RenderedSection{Name: name, Text: t, Chars: runes.Count(t), Cut: cut}
		p.Chars += p.Sections[k].Chars
	}
	if len(spans) > 1 {
		p.Chars += 2 * (len(spans) - 1)
	}
	return p
}
