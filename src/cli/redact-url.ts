/** Drops a password from URLs such as redis://:secret@host. */
export function redactUrl(text: string): string {
  try {
    const url = new URL(text);
    if (url.password !== '') url.password = '***';
    return url.toString().replace(/\/$/, '');
  } catch {
    return text;
  }
}
