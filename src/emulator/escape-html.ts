const REPLACEMENTS: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Escapes text for HTML element content and quoted attribute values (the inbox page shows user text). */
export function escapeHtml(value: string | number): string {
  return String(value).replace(/[&<>"']/g, (ch) => REPLACEMENTS[ch] ?? ch);
}
