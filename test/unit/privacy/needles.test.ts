import { describe, expect, it } from 'vitest';
import { customerIn, parseCustomer } from '../../../src/base/customer-match.js';
import { conversationNeedles, customerNeedles } from '../../../src/privacy/needles.js';

describe('parseCustomer', () => {
  it.each([
    ['+62 812-3456-7890', '6281234567890'],
    ['0812 3456 7890', '81234567890'],
    ['(021) 555-1234', '215551234'],
    ['  +44.20.7946.0958 ', '442079460958'],
  ])('reads the phone number %s', (written, digits) => {
    expect(parseCustomer(written)).toEqual({ kind: 'phone', written: written.trim(), digits });
  });

  it('reads an e-mail address, lower-cased', () => {
    expect(parseCustomer('Budi.Santoso+toko@Mail.Example.co.id')).toEqual({
      kind: 'email',
      written: 'Budi.Santoso+toko@Mail.Example.co.id',
      address: 'budi.santoso+toko@mail.example.co.id',
    });
  });

  it.each([
    ['budi@', /not an e-mail address/],
    ['12345', /neither a phone number \(8-15 digits/],
    ['budi', /neither a phone number/],
    ['0812 3456 7890 1234 5678', /neither a phone number/],
    ['', /neither a phone number/],
  ])('refuses %j with a reason and an example', (written, message) => {
    expect(() => parseCustomer(written)).toThrow(message);
  });
});

describe('customerIn', () => {
  const phone = parseCustomer('+62 812-3456-7890');
  it.each([
    ['hubungi 0812-3456-7890 ya', true],
    ['WA: +6281234567890', true],
    ['nomor (0812) 3456.7890', true],
    ['81234567890', true],
    ['0812-3456-7891', false],
    ['pesanan 12345678901234', false],
    ['', false],
  ])('phone in %j: %s', (text, expected) => {
    expect(customerIn(text, phone)).toBe(expected);
  });

  const email = parseCustomer('budi@example.com');
  it.each([
    ['kirim ke Budi@Example.com ya', true],
    ['<budi@example.com>', true],
    ['abudi@example.com', false],
    ['budi@example.com.au', false],
    ['budi at example.com', false],
  ])('e-mail in %j: %s', (text, expected) => {
    expect(customerIn(text, email)).toBe(expected);
  });

  it('gives the stores a coarse filter the confirmed matches always pass', () => {
    expect(customerNeedles(phone)).toEqual({ mode: 'digits', values: ['34567890'] });
    expect(customerNeedles(email)).toEqual({ mode: 'lower', values: ['budi@example.com'] });
  });
});

describe('conversationNeedles', () => {
  it('names the id as canonical events store it, and as a JSON string inside a stored body', () => {
    expect(conversationNeedles('c-1"x')).toEqual({
      mode: 'plain',
      values: ['"conversationId":"c-1\\"x"', '\\"c-1\\\\\\"x\\"'],
    });
  });
});
