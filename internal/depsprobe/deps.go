package depsprobe

import (
	_ "github.com/gofrs/flock"
	_ "github.com/invopop/jsonschema"
	_ "github.com/ollama/ollama/api"
	_ "github.com/openai/openai-go/v3"
	_ "github.com/santhosh-tekuri/jsonschema/v5"
	_ "github.com/stretchr/testify/require"
	_ "golang.org/x/sync/errgroup"
	_ "golang.org/x/sync/semaphore"
)
