-- The trusted side's record of scidex-jail runs and their outputs, written
-- by scidex_jail.post_process.commit_outputs (the only code that writes
-- here; analyses never reach the database). Safe to run again, and on a
-- database made by an earlier version: every statement is IF NOT EXISTS
-- or a no-op the second time, and commit_outputs runs it in its own
-- transaction under an advisory lock when a table or a column is missing.

CREATE TABLE IF NOT EXISTS scidex_jail_runs (
    run_id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    analysis_id       text NOT NULL,
    started_at        timestamptz NOT NULL,
    ended_at          timestamptz NOT NULL,
    status            text NOT NULL,           -- the report's status: ok, timeout, oom_killed, output_limit, ...
    exit_code         integer NOT NULL,        -- the jail's exit status (128+n after signal n)
    signal            text,                    -- e.g. SIGKILL when the analysis died of one
    completion_notes  text NOT NULL,           -- one sentence: how the run ended, which limit stopped it, why it failed
    profile           text NOT NULL,
    limits            jsonb NOT NULL,          -- the report's limits: timeout, memory, cpus, pids, disk, ...
    usage             jsonb NOT NULL,          -- the cgroup's counters (peak memory, OOM kills, PID-limit hits, CPU)
    wall_seconds      double precision NOT NULL,
    cpu_seconds       double precision NOT NULL,
    peak_memory_bytes bigint NOT NULL,
    collected_to      text,                    -- where the outputs were copied on the host (a record, not a store)
    report            jsonb NOT NULL,          -- the whole report (NUL characters in its strings made U+FFFD)
    report_sha256     text NOT NULL,           -- of the report's canonical JSON: a second commit must match
    committed_at      timestamptz NOT NULL DEFAULT now(),
    -- Added by issue 33 (also in the migration below). NULL in rows of
    -- earlier versions, and for a stream nothing recorded.
    outputs_policy    text,                    -- commit_outputs' outputs=: ok-only, all-marked, none
    stdout_tail       text,                    -- the stream's last 4 KiB (UTF-8, bad bytes and NUL replaced)
    stderr_tail       text,                    --   ... a failed analysis' traceback is here
    stdout_bytes      bigint,                  -- what the analysis wrote to the stream
    stderr_bytes      bigint,
    stdout_dropped    bigint,                  -- of which neither delivered in full nor kept (a budget, a bound)
    stderr_dropped    bigint,
    UNIQUE (analysis_id, started_at)
);

CREATE TABLE IF NOT EXISTS scidex_jail_outputs (
    run_id      bigint NOT NULL REFERENCES scidex_jail_runs (run_id) ON DELETE CASCADE,
    path        text NOT NULL,                 -- relative to the run directory
    size        bigint NOT NULL,
    sha256      text NOT NULL,                 -- verified against the bytes before the commit
    media_type  text NOT NULL,
    content     bytea,                         -- the bytes, up to the inline limit
    stored_at   text,                          -- else the URI commit_outputs' store hook returned
                                               -- (rows of earlier versions: the collected file's host path)
    partial     boolean NOT NULL,              -- the run did not end ok: the file may be cut short
    PRIMARY KEY (run_id, path),
    CHECK ((content IS NULL) <> (stored_at IS NULL))
);

CREATE INDEX IF NOT EXISTS scidex_jail_runs_status ON scidex_jail_runs (status);

-- Migration from the schema before issue 33: the same columns, added to
-- tables made by it. An output committed then is partial when its run was
-- not ok (those versions committed a timed-out run's files unmarked).
ALTER TABLE scidex_jail_runs
    ADD COLUMN IF NOT EXISTS outputs_policy text,
    ADD COLUMN IF NOT EXISTS stdout_tail    text,
    ADD COLUMN IF NOT EXISTS stderr_tail    text,
    ADD COLUMN IF NOT EXISTS stdout_bytes   bigint,
    ADD COLUMN IF NOT EXISTS stderr_bytes   bigint,
    ADD COLUMN IF NOT EXISTS stdout_dropped bigint,
    ADD COLUMN IF NOT EXISTS stderr_dropped bigint;
ALTER TABLE scidex_jail_outputs ADD COLUMN IF NOT EXISTS partial boolean;
UPDATE scidex_jail_outputs o SET partial = (r.status <> 'ok')
    FROM scidex_jail_runs r WHERE o.run_id = r.run_id AND o.partial IS NULL;
ALTER TABLE scidex_jail_outputs ALTER COLUMN partial SET NOT NULL;
