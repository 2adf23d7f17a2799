import { createHash, timingSafeEqual } from 'node:crypto';

/** Compares two secrets in constant time; hashing first makes unequal lengths safe too. */
export function equalsConstantTime(presented: string, expected: string): boolean {
  const a = createHash('sha256').update(presented, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b);
}
