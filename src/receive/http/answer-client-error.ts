import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebhookReply } from '../webhook-reply.js';
import { failure } from '../webhook-reply.js';

/**
 * Answers for requests Node's HTTP parser refuses before Express sees them: a Content-Length given
 * twice or beside Transfer-Encoding, one that is not a number, a body that ends before its
 * Content-Length, bytes a header may not hold, headers over Node's 16 KB, a request not complete
 * within the server's request timeout. Node's own answer is an empty `400 Bad Request` (431, 408),
 * the only answers of the receiver that were not JSON (found by test/hostile); these are the same
 * statuses with the usual JSON body and outcome header.
 */
export function clientErrorReply(code: string | undefined): WebhookReply {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return failure(
        431,
        'bad_request',
        'the request headers are larger than 16 KB; send the webhook with ordinary headers',
      );
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return failure(
        408,
        'bad_request',
        'the request was not complete in time; send the whole request at once',
      );
    default:
      return failure(
        400,
        'bad_request',
        `the request is not valid HTTP/1.1 (${PARSER_REASONS[code ?? ''] ?? 'it could not be parsed'}); it was not read`,
      );
  }
}

const PARSER_REASONS: Readonly<Record<string, string>> = {
  HPE_UNEXPECTED_CONTENT_LENGTH: 'Content-Length is given twice, or beside Transfer-Encoding',
  HPE_INVALID_CONTENT_LENGTH: 'Content-Length is not a number',
  HPE_INVALID_TRANSFER_ENCODING: 'Transfer-Encoding is not valid',
  HPE_INVALID_CHUNK_SIZE: 'a chunk size is not valid',
  HPE_INVALID_EOF_STATE: 'the connection ended before the body was complete',
  HPE_INVALID_HEADER_TOKEN: 'a header holds a character HTTP does not allow',
  HPE_INVALID_METHOD: 'the method is not one HTTP knows',
  HPE_INVALID_URL: 'the request target is not valid',
  HPE_INVALID_VERSION: 'the HTTP version is not valid',
  HPE_LF_EXPECTED: 'a line does not end in CRLF',
  HPE_CR_EXPECTED: 'a line does not end in CRLF',
};

/** The raw HTTP/1.1 answer, written straight to the socket (there is no response object yet). */
export function clientErrorResponse(reply: WebhookReply): string {
  const body = reply.body;
  return [
    `HTTP/1.1 ${reply.status} ${STATUS_CODES[reply.status] ?? 'Error'}`,
    'content-type: application/json; charset=utf-8',
    `content-length: ${Buffer.byteLength(body)}`,
    `x-convo-bridge-outcome: ${reply.outcome}`,
    'connection: close',
    '',
    body,
  ].join('\r\n');
}

/**
 * The server's `clientError` listener. As Node's default: nothing is written when the peer is gone
 * or an answer to an earlier request on the socket has started (that would corrupt it); the socket
 * is closed either way.
 */
export function answerClientError(
  error: Error & { code?: string },
  socket: Duplex,
): WebhookReply | undefined {
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent === true) {
    socket.destroy();
    return undefined;
  }
  const reply = clientErrorReply(error.code);
  socket.end(clientErrorResponse(reply), () => socket.destroy());
  return reply;
}
