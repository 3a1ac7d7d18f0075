// Package fault classifies errors for every transport: a bad request
// field (FieldError), a bad input file (InputError), a cancelled request,
// or a failure of genlens itself (Kind, Classify). The command line maps
// a Kind to an exit code, the service to an HTTP status.
//
// It is a leaf, so that the packages that read files (dataio), run jobs
// (job) and serve HTTP (server) share one classification without
// importing each other. Messages name request fields in braces,
// {chunk_size}, rendered per transport by package internal/fields.
//
// Text a user or a server brought (a line of a file, an upstream's error
// message) goes through Printable before it is part of a message.
package fault
