// Package netpolicy is the host side of a custom tool's fetch: the network
// policy and the HTTP client that enforces it.
//
// Tool code and tool definitions are written by an LLM, so nothing a tool
// says can widen what it reaches beyond the public internet. Only the
// operator can (`lumen up --allow-net HOST[:PORT]`, parsed by ParseAllow):
//
//   - a tool reaches only the hosts its definition declares (New);
//   - HTTPS only, except to hosts the operator listed (LAN devices rarely
//     have TLS);
//   - a host that resolves to loopback, private, link-local, CGNAT,
//     multicast or otherwise special addresses is refused unless the
//     operator listed it, and a cloud metadata address only if the operator
//     listed that exact address;
//   - the client resolves once, checks every address and dials one of
//     those addresses, never the name again, so DNS cannot rebind between
//     the check and the connection; every redirect hop is checked the same
//     way;
//   - responses are capped in size, requests in time and tools in rate.
//
// A request the policy does not send is a *Refused; one that hits a limit is
// an *Exceeded (errors.Is with ErrRateLimited, ErrTooLarge or ErrTimeout).
// Both carry a sentence that says what to do, written for the LLM that
// wrote the tool. Error texts name only the scheme, host and port of a URL,
// never its path or query, which may carry a substituted secret.
package netpolicy
