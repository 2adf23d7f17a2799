/**
 * Link handling of `POST /v1/message` (messaging-service-interface.md, POST /v1/message, behaviour 3):
 * a text of a sentence plus links has each link checked; an image link becomes a separate image
 * message, an unreachable link is removed, and a text of exactly one link is sent as it stands.
 *
 * The emulator never fetches anything: reachability and "is an image" come from allow-lists of
 * URL prefixes, so tests stay offline and deterministic.
 */
export interface LinkPolicy {
  /** URL prefixes that count as reachable (`*` matches every URL). */
  readonly reachable: readonly string[];
  /** URL prefixes that count as reachable images (`*` matches every URL). */
  readonly images: readonly string[];
}

export interface SplitText {
  /** The text message to send, or null when nothing is left of the text. */
  readonly text: string | null;
  /** Image links to send as separate image messages, in the order they appeared. */
  readonly images: readonly string[];
}

const LINK = /\bhttps?:\/\/[^\s<>"'`]+/gi;
const TRAILING_PUNCTUATION = /[.,;:!?)\]}]+$/;
const SINGLE_LINK = /^https?:\/\/\S+$/i;

function matches(url: string, prefixes: readonly string[]): boolean {
  return prefixes.some((prefix) => prefix === '*' || url.startsWith(prefix));
}

/** Splits `text` per the link rules. Without a policy every link is reachable and none is an image. */
export function splitLinks(text: string, policy: LinkPolicy | undefined): SplitText {
  if (policy === undefined || SINGLE_LINK.test(text.trim())) return { text, images: [] };
  const images: string[] = [];
  const kept = text.replace(LINK, (raw) => {
    const url = raw.replace(TRAILING_PUNCTUATION, '');
    const tail = raw.slice(url.length);
    if (matches(url, policy.images)) {
      images.push(url);
      return tail;
    }
    if (matches(url, policy.reachable)) return raw;
    return tail;
  });
  if (kept === text) return { text, images };
  const cleaned = kept
    .split('\n')
    .map((line) =>
      line
        .replace(/[ \t]{2,}/g, ' ')
        .replace(/ +([.,;:!?])/g, '$1')
        .trim(),
    )
    .join('\n')
    .trim();
  return { text: cleaned === '' ? null : cleaned, images };
}

/** The MIME type of an image link, guessed from its file extension. */
export function imageMimeType(url: string): string {
  const path = url.split(/[?#]/, 1)[0]?.toLowerCase() ?? '';
  if (path.endsWith('.png')) return 'image/png';
  if (path.endsWith('.gif')) return 'image/gif';
  if (path.endsWith('.webp')) return 'image/webp';
  return 'image/jpeg';
}
