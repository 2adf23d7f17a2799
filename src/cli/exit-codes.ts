/** Exit codes of every `convo-bridge` command (documented in docs/operations.md, "Commands"). */
export const EXIT = {
  ok: 0,
  /** The input is wrong and the user can fix it: invalid config, bad flags, unknown DLQ id. */
  invalidInput: 1,
  /** Something outside could not be reached or failed: Redis down, platform unreachable. */
  unavailable: 2,
  /** A bug or an unexpected state; the message says where. */
  internal: 3,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];
