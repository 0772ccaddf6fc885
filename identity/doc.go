package identity
