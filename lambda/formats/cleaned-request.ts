/** A request with what its target cannot take removed, to send instead of the client's bytes. */
export interface CleanedRequest {
  /** The request to send: the client's bytes when nothing had to go, else re-serialized. */
  body: string;
  /** What was removed, for `x-gateway-dropped` and the log. */
  dropped: string[];
}
