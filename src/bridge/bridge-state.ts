/**
 * What the steps of a running bridge share: set by one step, read by the others (the layout
 * claim, readiness, the shutdown). One object, so that each reads the value of the moment.
 */
export interface BridgeState {
  /** stop() has begun: readiness says so, the layout claim stops retrying. */
  shuttingDown: boolean;
  /** This Redis holds another key layout than the config asks for (readiness reports it). */
  layoutProblem?: Error;
  /** What `stopped` resolves with: 2 when the key layout does not match the config. */
  exitCode: number;
}
