/**
 * The platform operations and their paths (messaging-service-interface.md, "Endpoints"). Fault
 * injection and the request log name operations by these endpoint names.
 */
export const ENDPOINT_NAMES = [
  'send',
  'history',
  'note',
  'needHuman',
  'needHumanTotal',
  'version',
  'health',
] as const;
export type EndpointName = (typeof ENDPOINT_NAMES)[number];

export interface PlatformRoute {
  readonly endpoint: EndpointName;
  /** The `{conversation_id}` path segment of the history call ('' when it is missing). */
  readonly conversationId: string | null;
}

const HISTORY_PREFIX = '/v1/message/';

/** Matches a request to an operation; undefined for any other method and path. */
export function matchPlatformRoute(method: string, rawPath: string): PlatformRoute | undefined {
  const path = rawPath.length > 1 && rawPath.endsWith('/') ? rawPath.slice(0, -1) : rawPath;
  if (method === 'POST') {
    if (path === '/v1/message') return { endpoint: 'send', conversationId: null };
    if (path === '/v1/note') return { endpoint: 'note', conversationId: null };
    if (path === '/v1/conversation/need-human') return { endpoint: 'needHuman', conversationId: null };
    return undefined;
  }
  if (method !== 'GET' && method !== 'HEAD') return undefined;
  if (path === '/v1/conversation/need-human/total')
    return { endpoint: 'needHumanTotal', conversationId: null };
  if (path === '/version') return { endpoint: 'version', conversationId: null };
  if (path === '/health') return { endpoint: 'health', conversationId: null };
  if (path === '/v1/message') return { endpoint: 'history', conversationId: '' };
  if (path.startsWith(HISTORY_PREFIX)) {
    const segment = path.slice(HISTORY_PREFIX.length);
    if (segment.includes('/')) return undefined;
    try {
      return { endpoint: 'history', conversationId: decodeURIComponent(segment) };
    } catch {
      return undefined;
    }
  }
  return undefined;
}
