// Package ops holds Anvil's admin actions: each validates what it is given
// and makes the same API write the CLI makes, so the CLI (cmd/anvil) and
// the admin console share one implementation and one set of messages.
//
// Every function validates first and returns an error that names the
// object and field to fix; API errors are wrapped with %w, so callers can
// test them with apierrors.IsForbidden, IsNotFound or IsConflict. The
// string a function returns is one human line saying what was done.
package ops
