/** `scheme://...@` at the start of a text, up to its last `@`: what may hold a password. */
const USERINFO = /^([A-Za-z][A-Za-z0-9+.-]*:\/\/).*@/;

/**
 * Drops a password from URLs such as redis://:secret@host (shown as redis://:***@host). A text
 * that looks like a URL with credentials but does not parse (a bad port, a `/` or `#` in the
 * password) gets everything between `://` and its last `@` hidden, since where the password ends
 * cannot be known; any other text is returned as it is.
 */
export function redactUrl(text: string): string {
  try {
    const url = new URL(text);
    if (url.password !== '') url.password = '***';
    return url.toString().replace(/\/$/, '');
  } catch {
    return text.replace(USERINFO, '$1***@');
  }
}

/** Whether `text` looks like a URL with a user or password part (what redactUrl may change). */
export function looksLikeUrlWithCredentials(text: string): boolean {
  return USERINFO.test(text);
}
