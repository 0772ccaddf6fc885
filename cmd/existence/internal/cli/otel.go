package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
)

// contentEnv opts in to prompts, replies and tool arguments on spans, as
// OpenTelemetry's GenAI instrumentations do.
const contentEnv = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"

// tracing is the OpenTelemetry set-up of a command: a TracerProvider that
// exports spans over OTLP when the standard environment asks for it.
type tracing struct {
	// provider is nil when tracing is off.
	provider trace.TracerProvider
	// content records prompts and tool arguments on spans ($OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true).
	content bool
	// endpoint says where spans go, for the start-up line.
	endpoint string
	sdk      *sdktrace.TracerProvider
}

// otlpTracing sets up OTLP trace export from the standard variables:
// tracing is on when OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set, unless OTEL_SDK_DISABLED is
// true or OTEL_TRACES_EXPORTER is "none". The protocol is
// OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL:
// "http/protobuf" (the default), "http/json" is refused (the Go exporter
// has no JSON encoding), and "grpc". The exporters read the other
// OTEL_EXPORTER_OTLP_* variables (headers, timeout, compression,
// certificates, insecure) themselves; the resource reads OTEL_SERVICE_NAME
// (default "existence") and OTEL_RESOURCE_ATTRIBUTES. Spans are batched;
// call shutdown to flush them. getenv is os.Getenv (tests pass theirs).
func otlpTracing(ctx context.Context, getenv func(string) string) (*tracing, error) {
	t := &tracing{}
	if v, _ := strconv.ParseBool(getenv("OTEL_SDK_DISABLED")); v {
		return t, nil
	}
	endpoint := getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	if endpoint == "" {
		endpoint = getenv("OTEL_EXPORTER_OTLP_ENDPOINT")
	}
	if endpoint == "" || strings.EqualFold(getenv("OTEL_TRACES_EXPORTER"), "none") {
		return t, nil
	}
	protocol := getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if protocol == "" {
		protocol = getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	var (
		exp *otlptrace.Exporter
		err error
	)
	switch protocol {
	case "", "http/protobuf":
		exp, err = otlptracehttp.New(ctx)
	case "grpc":
		exp, err = otlptracegrpc.New(ctx)
	default:
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL %q: want http/protobuf or grpc", protocol)
	}
	if err != nil {
		return nil, fmt.Errorf("OpenTelemetry: the OTLP exporter: %w", err)
	}
	res, err := resource.New(ctx, resource.WithFromEnv(), resource.WithTelemetrySDK(),
		resource.WithAttributes(semconv.ServiceName(serviceName(getenv))))
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, fmt.Errorf("OpenTelemetry: the resource: %w", err)
	}
	t.sdk = sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	t.provider = t.sdk
	t.content, _ = strconv.ParseBool(getenv(contentEnv))
	t.endpoint = endpoint + " (" + cmp.Or(protocol, "http/protobuf") + ")"
	return t, nil
}

// serviceName is OTEL_SERVICE_NAME, else "existence".
func serviceName(getenv func(string) string) string {
	return cmp.Or(getenv("OTEL_SERVICE_NAME"), "existence")
}

// shutdown flushes the spans still batched and stops the exporter.
func (t *tracing) shutdown(ctx context.Context) error {
	if t == nil || t.sdk == nil {
		return nil
	}
	if err := t.sdk.Shutdown(ctx); err != nil {
		return fmt.Errorf("OpenTelemetry: flushing the spans: %w", err)
	}
	return nil
}

// startTracing is otlpTracing with the process's environment; a line on
// stderr says where spans go.
func startTracing(ctx context.Context, e *env) (*tracing, error) {
	t, err := otlpTracing(ctx, os.Getenv)
	if err != nil {
		return nil, err
	}
	if t.provider != nil {
		fmt.Fprintf(e.stderr, "%s: exporting OpenTelemetry spans to %s\n", e.prog, t.endpoint)
	}
	return t, nil
}
