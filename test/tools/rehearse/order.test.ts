import { describe, expect, it } from 'vitest'
import { TraceError } from '../../../tools/simulate/trace'
import { inTimeOrder } from '../../../tools/rehearse/order'
import type { TrafficFile } from '../../../tools/rehearse/formats'
import { lines, textFile } from '../../support/traffic'

/** A CSV file of requests at these seconds (paths name them: /<file>/<second>). */
function csv(name: string, seconds: number[]): TrafficFile {
  return textFile(
    name,
    lines('time,path', ...seconds.map((s) => `${1793610000 + s},/${name}/${s}`))
  )
}

/** The paths of the requests in the order replayed, and the problems met. */
async function replayed(files: TrafficFile[], slackMs: number, opened: string[] = []) {
  const problems: string[] = []
  const watched = files.map((file) => ({
    ...file,
    open: () => {
      opened.push(file.name)
      return file.open()
    },
  }))
  const traffic = await inTimeOrder(watched, slackMs, (problem) => {
    problems.push(problem.message)
  })
  const order: string[] = []
  for await (const batch of traffic.batches) for (const record of batch) order.push(record.target!)
  return { order, problems, traffic }
}

describe('requests in time order', () => {
  it('puts a file’s lines in order within the slack, keeping file order among equal times', async () => {
    const { order, problems } = await replayed([csv('a', [0, 2, 1, 1, 5, 3])], 2_000)
    expect(problems).toEqual([])
    expect(order).toEqual(['/a/0', '/a/1', '/a/1', '/a/2', '/a/3', '/a/5'])
  })

  it('names a line further out of order than the slack, or skips it when told', async () => {
    const { order, problems } = await replayed([csv('a', [0, 10, 7, 11])], 2_000)
    expect(problems).toEqual([
      'a:4: 2026-11-02T09:00:07.000Z is 3.000 s before a request above it in the file, more than --reorder (2 s) allows',
    ])
    expect(order).toEqual(['/a/0', '/a/10', '/a/11'])
    await expect(
      inTimeOrder([csv('a', [0, 10, 7])], 2_000, (problem) => {
        throw problem
      }).then(async (traffic) => {
        for await (const _ of traffic.batches);
      })
    ).rejects.toThrow(TraceError)
  })

  it('merges overlapping files, and opens each when the replay reaches it', async () => {
    const opened: string[] = []
    const files = [csv('late', [100, 101, 103]), csv('early', [0, 50, 102, 104]), csv('empty', [])]
    const { order, traffic } = await replayed(files, 1_000, opened)
    expect(order).toEqual([
      '/early/0',
      '/early/50',
      '/late/100',
      '/late/101',
      '/early/102',
      '/late/103',
      '/early/104',
    ])
    expect(traffic.files.map((file) => file.name)).toEqual(['late', 'early'])
    // Each opened once to find its first request, then again when the replay reached it.
    expect(opened).toEqual(['late', 'early', 'empty', 'early', 'late'])
  })
})
