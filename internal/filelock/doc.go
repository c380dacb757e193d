// Package filelock holds what the pin file (package runtime) and the config file (package config) both need to
// edit a file that other processes edit too: an advisory lock beside the file whose wait is bounded by a context
// and a timeout, an atomic replace, and symbolic links followed to the file they name (a file kept in a dotfiles
// repository and linked into place is written where it lives).
package filelock
