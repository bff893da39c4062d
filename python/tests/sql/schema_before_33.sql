-- The trusted side's record of scidex-jail runs and their outputs, written
-- by scidex_jail.post_process.commit_outputs (the only code that writes
-- here; analyses never reach the database). Safe to run again: every
-- statement is IF NOT EXISTS, and commit_outputs runs it in its own
-- transaction under an advisory lock.

CREATE TABLE IF NOT EXISTS scidex_jail_runs (
    run_id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    analysis_id       text NOT NULL,
    started_at        timestamptz NOT NULL,
    ended_at          timestamptz NOT NULL,
    status            text NOT NULL,           -- the report's status: ok, timeout, oom_killed, ...
    exit_code         integer NOT NULL,        -- the jail's exit status (128+n after signal n)
    signal            text,                    -- e.g. SIGKILL when the analysis died of one
    completion_notes  text NOT NULL,           -- one sentence: how the run ended, which limit stopped it
    profile           text NOT NULL,
    limits            jsonb NOT NULL,          -- the report's limits: timeout, memory, cpus, pids, disk, ...
    usage             jsonb NOT NULL,          -- the cgroup's counters (peak memory, OOM kills, PID-limit hits, CPU)
    wall_seconds      double precision NOT NULL,
    cpu_seconds       double precision NOT NULL,
    peak_memory_bytes bigint NOT NULL,
    collected_to      text,                    -- where the outputs were copied on the host
    report            jsonb NOT NULL,          -- the whole report
    report_sha256     text NOT NULL,           -- of the report's canonical JSON: a second commit must match
    committed_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (analysis_id, started_at)
);

CREATE TABLE IF NOT EXISTS scidex_jail_outputs (
    run_id      bigint NOT NULL REFERENCES scidex_jail_runs (run_id) ON DELETE CASCADE,
    path        text NOT NULL,                 -- relative to the run directory
    size        bigint NOT NULL,
    sha256      text NOT NULL,                 -- verified against the bytes before the commit
    media_type  text NOT NULL,
    content     bytea,                         -- the bytes, up to the inline limit
    stored_at   text,                          -- else the collected file's host path
    PRIMARY KEY (run_id, path),
    CHECK ((content IS NULL) <> (stored_at IS NULL))
);

CREATE INDEX IF NOT EXISTS scidex_jail_runs_status ON scidex_jail_runs (status);
