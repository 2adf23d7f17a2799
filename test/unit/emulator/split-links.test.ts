import { describe, expect, it } from 'vitest';
import { imageMimeType, splitLinks } from '../../../src/emulator/split-links.js';

const policy = { reachable: ['https://ok.example/'], images: ['https://img.example/'] };

describe('splitLinks', () => {
  it.each([
    ['no links', 'Halo Kak', { text: 'Halo Kak', images: [] }],
    [
      'a reachable link',
      'Lihat https://ok.example/a ya',
      { text: 'Lihat https://ok.example/a ya', images: [] },
    ],
    ['an unreachable link', 'Lihat https://no.example/a ya', { text: 'Lihat ya', images: [] }],
    ['an unreachable link before a full stop', 'Cek https://no.example/a.', { text: 'Cek.', images: [] }],
    [
      'an image link',
      'Foto https://img.example/a.png ya',
      { text: 'Foto ya', images: ['https://img.example/a.png'] },
    ],
    ['exactly one link', '  https://no.example/a  ', { text: '  https://no.example/a  ', images: [] }],
    ['only links, none kept', 'https://no.example/a https://no.example/b', { text: null, images: [] }],
    [
      'multiple lines',
      'Baris satu https://no.example/x\nBaris dua https://img.example/b.jpg',
      { text: 'Baris satu\nBaris dua', images: ['https://img.example/b.jpg'] },
    ],
  ])('%s', (_case, text, expected) => {
    expect(splitLinks(text, policy)).toEqual(expected);
  });

  it('leaves text alone without a policy', () => {
    expect(splitLinks('a https://x.example/b c', undefined)).toEqual({
      text: 'a https://x.example/b c',
      images: [],
    });
  });

  it('treats * as matching every URL', () => {
    expect(splitLinks('a https://x.example/b c', { reachable: ['*'], images: [] }).text).toBe(
      'a https://x.example/b c',
    );
    expect(splitLinks('a https://x.example/b c', { reachable: [], images: ['*'] })).toEqual({
      text: 'a c',
      images: ['https://x.example/b'],
    });
  });

  it.each([
    ['https://a/b.PNG', 'image/png'],
    ['https://a/b.gif?x=1', 'image/gif'],
    ['https://a/b.webp#f', 'image/webp'],
    ['https://a/b.jpg', 'image/jpeg'],
    ['https://a/b', 'image/jpeg'],
  ])('guesses %s as %s', (url, mime) => {
    expect(imageMimeType(url)).toBe(mime);
  });
});
