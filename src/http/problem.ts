/**
 * @module http/problem
 * RFC 9457 problem details responses.
 */

/** The fields of a problem details body; extension members may be added. */
export interface Problem {
  type?: string
  title: string
  status: number
  detail: string
  [extension: string]: unknown
}

/**
 * A `application/problem+json` response.
 *
 * @param problem - the body; `status` is also the response status
 * @param headers - extra headers
 */
export function problemResponse(problem: Problem, headers?: HeadersInit): Response {
  const response = new Response(JSON.stringify({ type: 'about:blank', ...problem }), {
    status: problem.status,
    headers,
  })
  response.headers.set('content-type', 'application/problem+json')
  response.headers.set('cache-control', 'no-store')
  return response
}
