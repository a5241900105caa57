// What an UNAVAILABLE gRPC call says to a person. grpc-js words it for its own maintainers ("No
// connection established. Last error: read ECONNRESET (2026-…). Resolution note: "): the cause
// is kept for --verbose (the error's cause), the technician reads one plain sentence instead.

/** What grpc-js's details say happened to the connection, as one short clause. */
export function unavailableCause(details: string): string {
  if (/\bENOENT\b/.test(details)) return 'its socket does not exist';
  if (/\bECONNREFUSED\b/.test(details)) return 'nothing accepts connections on its socket';
  if (/\bE(ACCES|PERM)\b/.test(details)) return 'permission to its socket was denied';
  if (/\bECONNRESET\b|\bEPIPE\b|Connection dropped|Connection closed|Socket closed|Failed to connect/i.test(details)) return 'its socket closed the connection';
  return 'it accepted no connection';
}

/**
 * The error's message and hint for a containerd that does not answer: `where` names the node and
 * socket ("lab1-n1 (/run/k3s/containerd/containerd.sock)"); `overSsh`: the socket is reached
 * through Holdfast's SSH tunnel, where the tunnel itself stays up while containerd is gone.
 */
export function containerdUnavailableText(details: string, where: string, overSsh: boolean): { message: string; hint: string } {
  const cause = unavailableCause(details);
  return overSsh
    ? {
        message: `containerd on ${where} stopped answering through the SSH tunnel: ${cause}`,
        hint: 'The node answers SSH, so containerd itself is down or restarting: check that k3s or RKE2 (or containerd) runs there and that the socket path is right, then run the command again.',
      }
    : {
        message: `containerd is not answering on ${where}: ${cause}`,
        hint: 'Check that k3s or RKE2 (or containerd) is running here and that the socket path is right, then run the command again.',
      };
}
