package main

import (
	"os"

	"github.com/scidex/scidex-jail/jail/report"
)

type schemaCmd struct{}

// Run prints the report's JSON Schema, byte for byte the file the packages
// ship, so a reader can validate reports against the binary it runs.
func (schemaCmd) Run() error {
	_, err := os.Stdout.Write(report.JSONSchema)
	return err
}
