// @ts-check
/**
 * apitypes.js — the shapes of the server's answers, as JSDoc typedefs only
 * (no code: the module exports nothing at run time). api.js's fetch
 * functions return them; views name them as import('./apitypes.js').Run.
 * Field meanings follow README.md's HTTP API; times are µs unless a name
 * says otherwise.
 */

/**
 * @typedef {object} RunFile
 * @property {string} name
 * @property {number} bytes
 * @property {number} rank
 */

/**
 * @typedef {object} Run
 * @property {string} id
 * @property {string} name
 * @property {number} created  unix seconds
 * @property {string} status
 * @property {number} ranks
 * @property {string} gpu      "" when no GPU was recorded
 * @property {number} bytes    sum of the source files' sizes
 * @property {number} events
 * @property {number} warnings import notes users should see
 * @property {RunFile[]} files
 * @property {string[]} tags
 * @property {boolean} [damaged] its stored database is damaged: only delete (and re-upload) helps
 * @property {string} [damage]   why, with what to do, when damaged
 * @property {string | null} [project]  null: no project
 * @property {Record<string, string>} [meta]  key=value metadata given at upload
 * @property {Record<string, any> | null} [trace]  the trace's own facts (format, cuda_runtime, world_size…)
 * @property {string | null} [hash]  content hash of its files
 * @property {RunFigures | null} [figures]  null until computed
 */

/**
 * The key figures the catalog keeps of a run (docs/api.md).
 * @typedef {object} RunFigures
 * @property {number | null} avg_step_us
 * @property {Record<string, number> | null} breakdown_us
 * @property {number} steps
 * @property {number} ranks
 * @property {number | null} gpu_utilization
 * @property {number | null} tensor_core_share
 * @property {number | null} peak_memory_bytes
 * @property {number} findings
 * @property {{id: string, title: string, severity: string, saving_us: number} | null} top_finding
 */

/**
 * One run of a project's trend (GET /api/projects/{P}/trend).
 * @typedef {object} TrendRun
 * @property {string} id
 * @property {string} name
 * @property {number} created
 * @property {string} url
 * @property {Record<string, string>} meta
 * @property {string} gpu
 * @property {number} world_size
 * @property {string} config  GPU, world size and non-volatile metadata: runs compared for regressions
 * @property {number | null} avg_step_us
 * @property {Record<string, number> | null} breakdown_us
 * @property {number | null} gpu_utilization
 * @property {number | null} tensor_core_share
 * @property {number | null} peak_memory_bytes
 * @property {number | null} steps
 * @property {string | null} previous  the previous run of its configuration
 * @property {number | null} change_pct  its average step against that run's, in %
 * @property {boolean} regression  change_pct above the server's regression_pct
 */

/**
 * @typedef {object} Trend
 * @property {string} project
 * @property {number} regression_pct
 * @property {string[]} volatile_meta
 * @property {TrendRun[]} runs  oldest first
 */

/**
 * @typedef {object} Health
 * @property {boolean} ok
 * @property {string} version
 * @property {boolean} read_only  the server started on a data folder it cannot write
 * @property {string} [reason]    why, when read_only
 */

/**
 * @typedef {object} JobError
 * @property {string} code
 * @property {string} message
 */

/**
 * @typedef {object} Job
 * @property {number} id
 * @property {'queued' | 'running' | 'done' | 'failed'} state
 * @property {string} phase  queued | parse | sort | write | index | commit | analyze
 * @property {string} name
 * @property {number} bytes_done
 * @property {number} bytes_total
 * @property {number} events
 * @property {JobStage[]} [stages]  the import's phases, then the derived stages
 * @property {number | null} [eta_s]  while running: seconds the whole import has left (null: no estimate yet)
 * @property {string} [run_id]  also while running, once the run is open (phase analyze)
 * @property {JobError} [error]
 */

/**
 * @typedef {object} JobStage
 * @property {string} name
 * @property {'running' | 'done' | 'stopped'} state
 * @property {number} seconds  so far while running
 */

/**
 * @typedef {object} Note
 * @property {'info' | 'repaired' | 'dropped'} level
 * @property {string} reason
 * @property {number} count
 * @property {string} [example]
 */

/**
 * @typedef {object} RankStats
 * @property {number} events
 * @property {number} slices
 * @property {number} flows
 * @property {number} instants
 * @property {number} counters
 * @property {number} mems
 * @property {number} metadata
 * @property {number} dropped
 * @property {number} repaired
 * @property {Record<string, number>} by_kind
 */

/**
 * @typedef {object} RankInfo
 * @property {number} rank
 * @property {string} file
 * @property {number} bytes
 * @property {string} format
 * @property {Record<string, unknown> | null} device        CUDA device properties
 * @property {Record<string, unknown> | null} distributed   e.g. {backend, rank, world_size}
 * @property {number} t0_ns
 * @property {number} t1_ns
 * @property {number} base_ns
 * @property {RankStats} stats
 * @property {Note[]} notes
 */

/**
 * @typedef {object} RunInfo
 * @property {RankInfo[]} ranks
 * @property {number} tracks
 * @property {number} slices
 */

/** @typedef {Run & {info: RunInfo}} RunDetail */

// --- analyses (run page tabs) -------------------------------------------------
/**
 * @typedef {object} GpuSummary
 * @property {number} device
 * @property {string} name
 * @property {number | null} memory_bytes
 * @property {string} compute_capability  e.g. "9.0"
 * @property {number} utilization  0..1, busy share of the steps' window
 * @property {number | null} compute_utilization  0..1, the same without collectives (null: run imported before it)
 * @property {number | null} sm_efficiency       0..1, estimated
 * @property {number | null} achieved_occupancy  0..1, estimated
 * @property {number | null} tensor_core_share   0..1 of kernel time
 * @property {number} kernel_us
 */

/**
 * Step time by category (µs); the keys are Overview.categories.
 * @typedef {Record<string, number>} Breakdown
 */

/**
 * @typedef {object} Step
 * @property {number} idx
 * @property {string} name          e.g. "ProfilerStep#3"
 * @property {number} start_us      trace clock
 * @property {number} dur_us
 * @property {number} host_start_us
 * @property {number} host_dur_us
 * @property {Breakdown} breakdown_us  adds up to dur_us
 */

/**
 * A finding of the rule catalog (server/derive/rules.c), ordered by saving_us.
 * @typedef {object} Recommendation
 * @property {string} id            stable rule id (catalog)
 * @property {'high' | 'medium' | 'low'} severity
 * @property {number | null} rank   null: about the whole run
 * @property {string} title
 * @property {{lines: string[]} & Record<string, unknown>} evidence  text with units, and the raw figures
 * @property {string} advice
 * @property {string | null} snippet
 * @property {string} doc_url
 * @property {string | null} link   run-page query string that shows the evidence
 * @property {number} saving_us     estimated saving per average step
 */

/**
 * GET ./api/runs/ID/overview
 * @typedef {object} Overview
 * @property {number} rank
 * @property {number[]} ranks
 * @property {number} t0_us
 * @property {GpuSummary[]} gpus
 * @property {string[]} categories  breakdown keys in display order
 * @property {Step[]} steps
 * @property {{dur_us: number, breakdown_us: Breakdown}} average
 * @property {Record<string, number>} peak_memory_bytes  per GPU device id
 * @property {number | null} peak_memory_cpu_bytes
 * @property {string[]} notes
 * @property {Recommendation[] | null} recommendations  null: the run predates the rules
 */

/**
 * One page of a server-side table.
 * @template R
 * @typedef {object} TablePage
 * @property {number} total   rows matching the filter (all pages)
 * @property {number} offset
 * @property {number} limit
 * @property {R[]} rows
 */

/**
 * @typedef {object} OperatorRow
 * @property {string} name
 * @property {string} [shape]  group=shape
 * @property {string} [stack]  group=stack
 * @property {number} calls
 * @property {number} host_self_us
 * @property {number} host_total_us
 * @property {number} device_self_us
 * @property {number} device_total_us
 * @property {boolean} tc_eligible
 * @property {number | null} tc_self_share  0..1
 */

/**
 * GET ./api/runs/ID/operators
 * @typedef {TablePage<OperatorRow> & {rank: number, group: string, has_device: boolean,
 *   has_shapes: boolean, has_stacks: boolean, source?: 'operators' | 'cuda_api_nvtx',
 *   totals: {calls: number, host_self_us: number, device_self_us: number}}} OperatorsPage
 */

/**
 * @typedef {object} KernelRow
 * @property {string} name
 * @property {string} [op]  group=op: the launching operator ("" = none)
 * @property {number} calls
 * @property {number} total_us
 * @property {number} mean_us
 * @property {number} min_us
 * @property {number} max_us
 * @property {number} share  total / all kernel time of the rank
 * @property {boolean} tensor_cores
 * @property {boolean} communication
 * @property {number | null} blocks_per_sm
 * @property {number | null} achieved_occupancy  0..1
 * @property {string | null} limiter
 * @property {string} family  diff_kernel_family's: "GEMM", "attention", … or the bare name
 */

/**
 * GET ./api/runs/ID/kernels (families: the rank's, most time first; not in CSV)
 * @typedef {TablePage<KernelRow> & {rank: number, group: string, kernel_us: number, tc_us: number, families?: {family: string, total_us: number}[]}} KernelsPage
 */

/**
 * @typedef {object} MemoryDevice
 * @property {string} id      "0" … or "cpu"
 * @property {string} label   "GPU 0", "CPU"
 * @property {number} peak_bytes
 * @property {number} peak_us
 * @property {number | null} memory_bytes  capacity
 */

/**
 * GET ./api/runs/ID/memory: the allocated/reserved curve of one device.
 * @typedef {object} MemoryCurve
 * @property {number} rank
 * @property {string} device
 * @property {MemoryDevice[]} devices
 * @property {number} start_us
 * @property {number} end_us
 * @property {{ts_us: number[], allocated: number[], reserved: number[]}} curve
 * @property {{bytes: number, ts_us: number} | null} peak
 * @property {{name: string, start_us: number, end_us: number}[]} steps
 */

/**
 * @typedef {object} MemoryEventRow
 * @property {string | null} op
 * @property {number} bytes
 * @property {number} addr
 * @property {number | null} alloc_us  null: allocated before the trace began
 * @property {number | null} free_us   null: still allocated at its end
 * @property {number | null} lifetime_us
 */

/** @typedef {TablePage<MemoryEventRow>} MemoryEventsPage */

// --- timeline (views/timeline.js) ---------------------------------------------------
// Times are µs on the trace clock; `strings` is the answer's string table
// (names are indexes into it).
/**
 * @typedef {object} TimelineTrack
 * @property {number} id
 * @property {'cpu' | 'gpu'} kind
 * @property {number | string} pid
 * @property {number | string} tid
 * @property {string} name      thread or stream name
 * @property {string | null} process   process name / label
 * @property {number | null} device  GPU device (gpu tracks)
 * @property {number | null} stream  CUDA stream (gpu tracks)
 * @property {number} max_depth
 * @property {number} nslices
 * @property {number} [rank]    set by the client on a stacked view (timeline/multirank.js)
 */

/**
 * GET ./api/runs/ID/timeline/tracks
 * @typedef {object} TimelineTracks
 * @property {number} rank
 * @property {number[]} ranks
 * @property {number} t0_us
 * @property {number} t1_us
 * @property {string[]} strings
 * @property {TimelineTrack[]} tracks
 * @property {{id: number, name: string, unit: string, rank?: number}[]} counters
 * @property {{name: string, start_us: number, end_us: number}[]} steps
 */

/**
 * One depth of a track in a timeline window, as columns: at most one item
 * per bucket; n > 1 marks a merged item (standing for n slices, named after
 * the longest, id 0).
 * @typedef {object} TimelineDepth
 * @property {number} depth
 * @property {number[]} ts
 * @property {number[]} dur
 * @property {number[]} name  indexes into strings
 * @property {number[]} n
 * @property {number[]} id
 */

/**
 * GET ./api/runs/ID/timeline
 * @typedef {object} TimelineWindow
 * @property {number} start_us
 * @property {number} end_us
 * @property {number} width
 * @property {number} bucket_us
 * @property {string[]} strings
 * @property {{id: number, depths: TimelineDepth[]}[]} tracks
 * @property {{id: number, ts: number[], min: number[], max: number[], last: number[]}[]} counters
 */

/**
 * A slice the details link to (a parent, the launching runtime call, a
 * launched kernel); a launcher also names its operator.
 * @typedef {{id?: number, name: string, ts_us: number, dur_us: number, track: number, op?: {id?: number, name: string, ts_us: number, dur_us: number, track: number}}} SliceLink
 */

/**
 * GET ./api/runs/ID/timeline/slice
 * @typedef {object} TimelineSlice
 * @property {number} id
 * @property {number} track
 * @property {string} name
 * @property {string} cat
 * @property {string} kind
 * @property {number} ts_us
 * @property {number} dur_us
 * @property {number} self_us
 * @property {number} depth
 * @property {Record<string, unknown>} args
 * @property {SliceLink[]} parents   outermost first
 * @property {SliceLink[]} launched  kernels/copies this runtime call launched
 * @property {SliceLink | null} launcher  the runtime call that launched this
 * @property {{dir: 'out' | 'in', cat: string, track: number, ts_us: number}[]} flows
 */

/**
 * GET ./api/runs/ID/timeline/search
 * @typedef {{total: number, hits: {id?: number, track: number, ts_us: number, dur_us: number, name: string}[]}} TimelineSearch
 */

/**
 * One line of a job log: its time (µs on the trace clock of the rank asked;
 * unix µs for a trace without baseTimeNanoseconds, and in live streams),
 * text, fields ({"loss": 2.31, "phase": "train"}), rank (null: the whole
 * job's) and whether it was posted live.
 * @typedef {{id: number, ts_us: number, text: string, fields: Record<string, number | string | boolean>, rank: number | null, live?: boolean, job?: string}} LogLine
 */

/**
 * GET /api/runs/{id}/logs.
 * @typedef {{lines: LogLine[], next: string | null, base_ns: number, clock: 'trace' | 'unix'}} RunLogs
 */

/**
 * GET ./api/runs/ID/timeline/flame — call paths by time containment
 * (nodes: parents first, parent −1 at a root), and the same time by lane
 * and by category.
 * @typedef {object} TimelineFlame
 * @property {number} start_us
 * @property {number} end_us
 * @property {{parent: number, name: string, count: number, total_us: number, self_us: number}[]} nodes
 * @property {{track: number, count: number, total_us: number, self_us: number}[]} lanes
 * @property {{cat: string, count: number, total_us: number, self_us: number}[]} cats
 * @property {number} dropped
 */

/**
 * GET ./api/runs/ID/timeline/aggregate
 * @typedef {object} TimelineAggregate
 * @property {{name: string, count: number, total_us: number, self_us: number, avg_us: number}[]} rows
 * @property {{id: number, name: string, min: number, max: number, avg: number}[]} counters
 */

/**
 * GET ./api/runs/ID/ranks — the cross-rank comparison (README, HTTP API).
 * @typedef {object} RanksRank
 * @property {number} rank
 * @property {string | null} file
 * @property {string | null} base_ns           Kineto's baseTimeNanoseconds (decimal text), null when absent
 * @property {number} t0_us
 * @property {number} dur_us
 * @property {number} offset_us                start on the aligned clock after the earliest rank's
 * @property {number | null} end_skew_us       median end offset of its collectives against the others'
 * @property {number | null} distributed_rank
 * @property {number | null} world_size
 * @property {string | null} backend
 * @property {number} steps
 * @property {number} avg_step_us
 * @property {Record<string, number>} breakdown_us
 * @property {number} comm_us
 * @property {number} compute_us
 * @property {number} overlap_us
 * @property {number} exposed_us
 * @property {boolean} host_collectives
 * @property {number} collectives
 * @property {number} collectives_matched
 * @property {number} collective_us
 * @property {number} wait_us
 * @property {number} transfer_us
 *
 * @typedef {object} RanksCommOp
 * @property {string} collective
 * @property {string | null} group
 * @property {string | null} dtype
 * @property {number | null} group_size
 * @property {number | null} in_nelems_min
 * @property {number | null} in_nelems_max
 * @property {number | null} out_nelems_max
 * @property {number | null} bytes_max
 * @property {number} calls
 * @property {number} dur_us
 * @property {number | null} wait_us
 * @property {number | null} transfer_us
 * @property {{rank: number, calls: number, dur_us: number, wait_us: number | null, transfer_us: number | null}[]} ranks
 *
 * @typedef {object} RanksKernel
 * @property {string} name
 * @property {boolean} communication
 * @property {number} total_us
 * @property {number[]} ranks_us   in the order of Ranks.ranks
 * @property {number[]} calls
 * @property {number} min_us
 * @property {number} median_us
 * @property {number} max_us
 * @property {number} min_rank
 * @property {number} max_rank
 *
 * @typedef {object} RanksStraggler
 * @property {number} rank
 * @property {string | null} title
 * @property {string | null} severity
 * @property {string[] | null} lines
 * @property {number | null} saving_us
 * @property {string | null} link
 * @property {number | null} excess_us
 * @property {number | null} others_wait_us
 * @property {number | null} late_us
 * @property {{name: string, step_us: number, own_us: number, others_own_us: number | null, late_us: number | null, collectives: number}[]} steps
 *
 * @typedef {object} Ranks
 * @property {string[]} categories
 * @property {RanksRank[]} ranks
 * @property {boolean} comparable
 * @property {number | null} world_size
 * @property {string} alignment
 * @property {{steps: string[], ranks: number[], dur_us: (number | null)[][], min_us: number | null, max_us: number | null, matched_by: string}} heatmap
 * @property {RanksCommOp[]} comm_ops
 * @property {RanksKernel[]} kernels
 * @property {RanksStraggler | null} straggler
 * @property {{collectives: boolean, steps: boolean}} truncated
 */

// --- deeper GPU analyses (views/analyses.js) ------------------------------------
/**
 * One rank's stored analyses: `window_ns` and `steps`, then one object per
 * analysis (idle, launch, queue, copy, overlap, annotations, fusion,
 * critical_path) whose fields each server/derive/analyses/<name>.c documents; an
 * analysis with nothing to say for the trace is an empty object. Times are
 * integer ns on the rank's trace clock.
 * @typedef {{window_ns: [number, number], steps: number} & Record<string, any>} AnalysesDoc
 *
 * @typedef {object} Analyses
 * @property {string} run
 * @property {Record<string, AnalysesDoc>} ranks  keyed by rank number
 */

/**
 * @typedef {object} Critpath
 * @property {string} run
 * @property {number} rank
 * @property {number} step  -1: every step
 * @property {string[]} categories  names of the `cat` column
 * @property {[number, number, number, number, number][]} segments  [ts, dur, cat, track, slice] (ns; slice 0: a gap)
 */

// --- comparing two runs (views/compare.js) ------------------------------------------
/**
 * @typedef {{added: number, removed: number, faster: number, slower: number, same: number}} DiffCounts
 *
 * @typedef {object} DiffSide
 * @property {string} id
 * @property {string} name
 * @property {number} rank
 * @property {number[]} ranks
 * @property {number} steps
 * @property {{name: string | null, memory_bytes: number | null, compute_capability: string | null} | null} device
 * @property {{dur_us: number, breakdown_us: Record<string, number>}} average
 * @property {number} kernel_us  kernel time per step
 * @property {number | null} gpu_utilization
 * @property {number | null} sm_efficiency
 * @property {number | null} tensor_core_share
 * @property {number | null} peak_memory_bytes
 *
 * @typedef {object} Diff
 * @property {DiffSide} a
 * @property {DiffSide} b
 * @property {string[]} categories
 * @property {number | null} speedup  A's average step / B's (> 1: B is faster)
 * @property {number} threshold
 * @property {{dur_us: number, breakdown_us: Record<string, number | null>, kernel_us: number | null,
 *   gpu_utilization: number | null, tensor_core_share: number | null}} delta
 * @property {DiffCounts} kernels
 * @property {DiffCounts} kernel_families
 * @property {DiffCounts} operators
 *
 * @typedef {object} DiffRow
 * @property {string} name
 * @property {number | null} a_calls
 * @property {number | null} b_calls
 * @property {number | null} a_us
 * @property {number | null} b_us
 * @property {number} delta_us
 * @property {number | null} ratio  b_us / a_us
 * @property {'added' | 'removed' | 'faster' | 'slower' | 'same'} status
 * @property {boolean} [tensor_cores]
 *
 * @typedef {TablePage<DiffRow> & {kind: string, group: string, per: string, metric: string,
 *   counts: DiffCounts, sort: string, order: string,
 *   a: {id: string, name: string, rank: number}, b: {id: string, name: string, rank: number}}} DiffPage
 */

// --- N runs side by side (views/comparen.js) -----------------------------------------
/**
 * @typedef {DiffSide & {created: number}} CompareRun  one run: the two-run compare's side, and when it was stored
 *
 * @typedef {object} CompareN
 * @property {string[]} categories
 * @property {number | null} rank  the rank read of every run (null: each run's lowest)
 * @property {CompareRun[]} runs   in the order asked
 */

export {};
