/**
 * `${VAR}` references are swapped for inert tokens before YAML parsing and resolved on the
 * parsed values afterwards. Two reasons: `{` and `}` are flow indicators, so
 * `{ business_id: ${BUSINESS_ID} }` is not valid YAML as written; and substituting into the
 * text would let a value holding `, ` `}` `#` or a newline change the structure of the file.
 * Tokens are plain letters, digits and underscores, valid in any YAML context.
 */
export interface EnvReference {
  token: string;
  /** Offset in the original text, for error positions. */
  offset: number;
  /** The text as written: `${PORT:-8080}`. */
  source: string;
  /** A valid `${NAME}` / `${NAME:-default}`; absent for `$${` (literal) and malformed ones. */
  name?: string;
  fallback?: string;
  /** What the token stands for when it is not a variable: `${` for `$${`, or the malformed text. */
  literal?: string;
  malformed?: boolean;
}

export interface TokenizedText {
  /** The text YAML parses. */
  text: string;
  references: Map<string, EnvReference>;
  /** Prefix every token starts with (chosen so it does not occur in the file). */
  marker: string;
  /** Maps an offset in `text` back to the original text. */
  toOriginalOffset(offset: number): number;
  /**
   * Puts the references back as written (`${SECRET_KEY}`) in text taken from what YAML parsed:
   * keys are not interpolated, so an error about a key would otherwise show the inner token.
   */
  restore(parsedText: string): string;
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function tokenizeEnvReferences(original: string): TokenizedText {
  let marker = '__cb_env_';
  for (let n = 0; original.includes(marker); n++) marker = `__cb_env${n}_`;
  const references = new Map<string, EnvReference>();
  const shifts: { originalStart: number; originalEnd: number; newStart: number; newEnd: number }[] = [];
  let out = '';
  let last = 0;
  // Where the next `}` and line break are, found again only once the scan has passed them: a fresh
  // search from every `${` made a line of unclosed `${${${...` quadratic (300 KB: 5 s; test/hostile).
  let nextClose = -2;
  let nextNewline = -2;
  let i = original.indexOf('$');
  while (i !== -1 && i < original.length) {
    let reference: Omit<EnvReference, 'token'> | undefined;
    let length = 0;
    if (original.startsWith('$${', i)) {
      length = 3;
      reference = { offset: i, source: '$${', literal: '${' };
    } else if (original.startsWith('${', i)) {
      if (nextClose !== -1 && nextClose < i + 2) nextClose = original.indexOf('}', i + 2);
      if (nextNewline !== -1 && nextNewline < i + 2) nextNewline = original.indexOf('\n', i + 2);
      const close = nextClose;
      const newline = nextNewline;
      if (close === -1 || (newline !== -1 && newline < close)) {
        length = 2;
        reference = { offset: i, source: original.slice(i, i + 2), literal: '${', malformed: true };
      } else {
        length = close + 1 - i;
        const inner = original.slice(i + 2, close);
        const split = inner.indexOf(':-');
        const name = split === -1 ? inner : inner.slice(0, split);
        const source = original.slice(i, close + 1);
        reference = NAME.test(name)
          ? { offset: i, source, name, ...(split === -1 ? {} : { fallback: inner.slice(split + 2) }) }
          : { offset: i, source, literal: source, malformed: true };
      }
    }
    if (reference) {
      const token = `${marker}${references.size}__`;
      references.set(token, { token, ...reference });
      out += original.slice(last, i);
      shifts.push({
        originalStart: i,
        originalEnd: i + length,
        newStart: out.length,
        newEnd: out.length + token.length,
      });
      out += token;
      last = i + length;
      i = original.indexOf('$', last);
    } else {
      i = original.indexOf('$', i + 1);
    }
  }
  out += original.slice(last);
  return {
    text: out,
    references,
    marker,
    restore(parsedText) {
      if (!parsedText.includes(marker)) return parsedText;
      return parsedText.replace(
        new RegExp(`${marker}\\d+__`, 'g'),
        (token) => references.get(token)?.source ?? token,
      );
    },
    toOriginalOffset(offset) {
      // Binary search for the last reference that starts at or before the offset (a linear scan
      // per call made files with thousands of references and problems quadratic; test/hostile).
      let low = 0;
      let high = shifts.length - 1;
      let last = -1;
      while (low <= high) {
        const mid = (low + high) >> 1;
        if ((shifts[mid]?.newStart ?? 0) <= offset) {
          last = mid;
          low = mid + 1;
        } else {
          high = mid - 1;
        }
      }
      const s = shifts[last];
      if (s === undefined) return offset;
      if (offset < s.newEnd) return s.originalStart;
      return offset + s.originalEnd - s.newEnd;
    },
  };
}
