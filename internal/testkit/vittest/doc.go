// Package vittest stands in for the published weights of the DINOv2
// networks in tests: a file with the published state dict's names and
// shapes and random values, served at the address genlens fetches the
// published file from, so that fetching and running a ViT by name is
// tested without the network and without the real files.
package vittest
