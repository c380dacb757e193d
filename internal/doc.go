// Package internal holds helpers shared by several packages of this module that no user should import: see its
// subpackages.
package internal
