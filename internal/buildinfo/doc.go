// Package buildinfo reads what a genlens binary knows of its own build
// (runtime/debug.ReadBuildInfo): the module version, the VCS revision,
// its commit time and whether the tree was dirty, and the toolchain,
// for `genlens version` and the reports that name the version they were
// made with.
package buildinfo
