// Package commands assembles the table of genlens's commands, the job
// kinds: each domain package (imagejob, llmjob, msejob, reprjob) lists its
// own, and All joins them. The command line builds its commands from All
// (cmd/genlens) and the service its kinds (jobrun), so that a command
// added to a domain's table is a command of both.
package commands

import (
	"slices"

	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/job/icljob"
	"github.com/genlens/genlens/job/imagejob"
	"github.com/genlens/genlens/job/llmjob"
	"github.com/genlens/genlens/job/msejob"
	"github.com/genlens/genlens/job/reprjob"
)

// All lists the job kinds, in the order the service lists them. Each is a
// command of the command line (cmd/genlens builds its flags and output)
// and a kind of the service (jobrun decodes its JSON body over New's
// defaults and handles the inputs and weights it declares).
var All = slices.Concat(llmjob.Commands, icljob.Commands, imagejob.Commands, reprjob.Commands, msejob.Commands)

// Named returns the command of a name ("mse fit") or slug ("mse-fit"),
// nil for none.
func Named(name string) *job.Command {
	for i := range All {
		if All[i].Name == name || All[i].Slug() == name {
			return &All[i]
		}
	}
	return nil
}
