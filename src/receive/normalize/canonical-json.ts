/**
 * JSON with object keys sorted at every level, so that two deliveries of the same body hash alike
 * whatever order the sender wrote the keys in (used for the event key of bodies without a message
 * id). Built as a string directly: no intermediate objects, so `__proto__` keys stay plain data.
 *
 * Iterative, with its own stack: JSON.parse takes any nesting depth, and a recursive walk would
 * overflow the call stack at a depth that depends on where it is called from (a few thousand
 * levels), so one body could get an event key in one delivery and be unreadable in its redelivery.
 */
type Step = { write: string } | { value: unknown };

export function canonicalJson(value: unknown): string {
  const out: string[] = [];
  // Popped from the end: each container pushes its closing text, its members in reverse, then
  // its opening text.
  const stack: Step[] = [{ value }];
  for (let step = stack.pop(); step !== undefined; step = stack.pop()) {
    if ('write' in step) {
      out.push(step.write);
      continue;
    }
    const current = step.value;
    if (Array.isArray(current)) {
      stack.push({ write: ']' });
      for (let i = current.length - 1; i >= 0; i--) {
        stack.push({ value: current[i] ?? null });
        if (i > 0) stack.push({ write: ',' });
      }
      stack.push({ write: '[' });
    } else if (current !== null && typeof current === 'object') {
      const record = current as Record<string, unknown>;
      const members: [string, unknown][] = [];
      for (const key of Object.keys(record).sort()) {
        const item = record[key];
        if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
        members.push([key, item]);
      }
      stack.push({ write: '}' });
      for (let i = members.length - 1; i >= 0; i--) {
        const [key, item] = members[i] as [string, unknown];
        stack.push({ value: item });
        stack.push({ write: `${i > 0 ? ',' : ''}${JSON.stringify(key)}:` });
      }
      stack.push({ write: '{' });
    } else {
      out.push(JSON.stringify(current) ?? 'null');
    }
  }
  return out.join('');
}
