import { normalizeWords } from './normalize-text.js';

/**
 * Every keyword of every rule in one word trie, built once at load. Scanning an event walks the
 * trie from each word of the text, so the cost grows with the text (times the longest phrase),
 * not with the number of rules or keywords. Matching is on whole normalised words: "refund"
 * does not match "refundable", "tidak puas" matches "TIDAK   puas!".
 */
interface TrieNode {
  next: Map<string, TrieNode>;
  /** Keyword ids whose last word is here. */
  ends: number[];
}

export interface KeywordIndex {
  readonly root: TrieNode;
  /** Normalised phrase of each keyword id ("tidak puas"). */
  readonly phrases: readonly string[];
}

export interface KeywordIndexBuilder {
  /** Adds a keyword (or finds the id of an equal one after normalisation). */
  add(keyword: string): number;
  build(): KeywordIndex;
}

export function createKeywordIndexBuilder(): KeywordIndexBuilder {
  const root: TrieNode = { next: new Map(), ends: [] };
  const phrases: string[] = [];
  const ids = new Map<string, number>();
  return {
    add(keyword) {
      const words = normalizeWords(keyword);
      const phrase = words.join(' ');
      const existing = ids.get(phrase);
      if (existing !== undefined) return existing;
      const id = phrases.length;
      phrases.push(phrase);
      ids.set(phrase, id);
      let node = root;
      for (const word of words) {
        let child = node.next.get(word);
        if (!child) {
          child = { next: new Map(), ends: [] };
          node.next.set(word, child);
        }
        node = child;
      }
      node.ends.push(id);
      return id;
    },
    build: () => ({ root, phrases }),
  };
}

/** Keyword ids found in the words, each with the word position of its first occurrence. */
export function findKeywords(index: KeywordIndex, words: readonly string[]): Map<number, number> {
  const found = new Map<number, number>();
  const root = index.root;
  if (root.next.size === 0) return found;
  for (let i = 0; i < words.length; i++) {
    let node = root.next.get(words[i] as string);
    for (let j = i + 1; node; j++) {
      for (const id of node.ends) if (!found.has(id)) found.set(id, i);
      if (j >= words.length || node.next.size === 0) break;
      node = node.next.get(words[j] as string);
    }
  }
  return found;
}
