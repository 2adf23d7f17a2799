/**
 * The calls the client makes, and whether repeating one is harmless. Spec:
 * messaging-service-interface.md, "Endpoints" and "States and transitions" (need-human repeats
 * succeed); sends and notes create a new message each time, so they are not idempotent.
 */
export const PLATFORM_OPERATIONS = [
  'sendMessage',
  'getMessages',
  'addNote',
  'markNeedHuman',
  'getNeedHumanTotal',
  'getVersion',
] as const;
export type PlatformOperation = (typeof PLATFORM_OPERATIONS)[number];

/**
 * `idempotent`: safe to repeat after any transient failure.
 * `creates`: repeating may create a duplicate; retried only when the request provably never
 * reached the server (see retry-policy.ts).
 */
export type OperationSafety = 'idempotent' | 'creates';

export const OPERATION_SAFETY: Readonly<Record<PlatformOperation, OperationSafety>> = {
  sendMessage: 'creates',
  addNote: 'creates',
  getMessages: 'idempotent',
  markNeedHuman: 'idempotent',
  getNeedHumanTotal: 'idempotent',
  getVersion: 'idempotent',
};
