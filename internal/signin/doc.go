// Package signin limits the attempts to sign in with a shared bearer
// token, per client address and over all addresses, without ever locking
// out for good an address the token was given from. It knows nothing of
// HTTP: the server asks Allow before checking a token, and reports the
// outcome with Failed or Succeeded.
package signin
