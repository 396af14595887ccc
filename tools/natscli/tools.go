//go:build tools

// Package natscli pins the real nats CLI that the end-to-end tests drive.
// It lives in its own module so that the CLI's dependencies never change
// Lumen's go.mod.
package natscli

import _ "github.com/nats-io/natscli/nats"
