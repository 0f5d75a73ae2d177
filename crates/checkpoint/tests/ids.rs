//! Ids, timestamps and versions minted exactly as in the Python golden traces.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value as Json;
use stategraph_checkpoint::id::{format_ts, now_ts, IdGenerator};
use stategraph_checkpoint::source::{Clock, FakeClock, OsRandom, PyRandom, RandomSource};
use stategraph_checkpoint::version_gen::{format_version, python_float_repr, VersionGenerator};
use stategraph_checkpoint::ChannelVersion;

/// 2025-01-01T00:00:00Z, the start of gen_golden.py's fake clocks.
const BASE_NS: u64 = 1_735_689_600 * 1_000_000_000;
/// gen_golden.py seeds the uuid6 node bits with `random.Random(SEED)`...
const ID_SEED: u64 = 1234;
/// ...and the savers' version fractions with `random.Random(SEED + 1)`.
const VERSION_SEED: u64 = 1235;

/// The id generator of gen_golden.py: `time_ns()` is `BASE + n ms` on the n-th call.
fn golden_ids() -> IdGenerator {
    IdGenerator::new(
        Arc::new(FakeClock::new(BASE_NS, 1_000_000)),
        Box::new(PyRandom::new(ID_SEED)),
    )
}

/// The `datetime.now()` of gen_golden.py: `BASE + 1 µs + n ms` on the n-th call.
fn golden_ts_clock() -> FakeClock {
    FakeClock::new(BASE_NS + 1_000, 1_000_000)
}

fn golden(name: &str) -> Json {
    let path: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "..",
        "..",
        "tests",
        "golden",
        name,
    ]
    .iter()
    .collect();
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// One stored checkpoint of a trace, root namespace only.
struct Row {
    id: String,
    step: i64,
    ts: String,
    versions: Vec<ChannelVersion>,
}

/// The root-namespace checkpoints of the InMemorySaver dump, in id order.
fn root_rows(trace: &Json) -> Vec<Row> {
    let mut rows: Vec<Row> = trace["inmemory"]["storage"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["checkpoint_ns"] == "")
        .map(|r| {
            let cp = &r["checkpoint"]["decoded"];
            assert_eq!(cp["id"], r["checkpoint_id"]);
            Row {
                id: r["checkpoint_id"].as_str().unwrap().to_owned(),
                step: r["metadata"]["decoded"]["step"].as_i64().unwrap(),
                ts: cp["ts"].as_str().unwrap().to_owned(),
                versions: cp["channel_versions"]
                    .as_object()
                    .unwrap()
                    .values()
                    .map(|v| ChannelVersion::from(v.as_str().unwrap()))
                    .collect(),
            }
        })
        .collect();
    rows.sort_by(|a, b| a.id.cmp(&b.id));
    rows
}

/// Replays a linear run (placeholder, then steps -1, 0, 1, ... each minting one id, one
/// ts and, from a saver, one version) and compares every byte with the trace.
fn replay_linear_run(name: &str, expected_steps: usize) {
    let rows = root_rows(&golden(name));
    assert_eq!(rows.len(), expected_steps, "{name}");
    let ids = golden_ids();
    let ts_clock = golden_ts_clock();
    let versions = VersionGenerator::python_seeded(VERSION_SEED);

    // Python's empty placeholder mints an id and a ts first and throws them away.
    ids.uuid6(-2);
    now_ts(&ts_clock);

    let mut previous_max: Option<ChannelVersion> = None;
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(
            row.step,
            i as i64 - 1,
            "{name}: steps are consecutive from -1"
        );
        assert_eq!(
            ids.uuid6(row.step),
            row.id,
            "{name}: id of step {}",
            row.step
        );
        assert_eq!(now_ts(&ts_clock), row.ts, "{name}: ts of step {}", row.step);
        // Every superstep bumps the changed channels to next(max of all versions).
        let minted = versions.next(previous_max.as_ref());
        let max = row.versions.iter().max().cloned();
        assert_eq!(
            max.as_ref(),
            Some(&minted),
            "{name}: version of step {}",
            row.step
        );
        previous_max = max;
    }
}

#[test]
fn single_node_trace_is_reproduced_byte_for_byte() {
    replay_linear_run("single_node.json", 3);
}

#[test]
fn chain3_trace_is_reproduced_byte_for_byte() {
    replay_linear_run("chain3.json", 12);
}

#[test]
fn join_and_send_fanout_traces_are_reproduced() {
    replay_linear_run("join.json", 4);
    replay_linear_run("send_fanout.json", 4);
}

#[test]
fn single_node_ids_are_the_documented_ones() {
    let ids = golden_ids();
    let minted: Vec<String> = [-2, -1, 0, 1].iter().map(|s| ids.uuid6(*s)).collect();
    assert_eq!(&minted[1], "1efc7d35-7fd4-6e20-bfff-1de970d3da1f");
    assert_eq!(&minted[2], "1efc7d35-7fd7-6530-8000-173401eaf614");
    assert_eq!(&minted[3], "1efc7d35-7fd9-6c40-8001-f149e935b870");
    assert_eq!(&minted[0][19..23], "bffe");
}

/// Traces with forks, resumes and subgraphs mint ids in an order that depends on the engine;
/// here only check that every id is the n-th mint of the shared generator for some n, with
/// the metadata step in the clock sequence, and that every version fraction and ts comes
/// from the same seeded sequences.
#[test]
fn every_trace_uses_the_seeded_sequences() {
    const CALLS: usize = 64;
    let ids = golden_ids();
    // Mint with clock_seq 0 and compare all but the clock-sequence group.
    let minted: Vec<String> = (0..CALLS).map(|_| ids.uuid6(0)).collect();
    let mut rng = PyRandom::new(VERSION_SEED);
    let fractions: Vec<String> = (0..CALLS)
        .map(|_| format_version(0, rng.random())[33..].to_owned())
        .collect();
    let ts_clock = golden_ts_clock();
    let stamps: Vec<String> = (0..CALLS).map(|_| now_ts(&ts_clock)).collect();

    for name in [
        "chain3.json",
        "conditional.json",
        "interrupt_resume.json",
        "join.json",
        "send_fanout.json",
        "single_node.json",
        "subgraph.json",
    ] {
        let trace = golden(name);
        for row in trace["inmemory"]["storage"].as_array().unwrap() {
            let id = row["checkpoint_id"].as_str().unwrap();
            let step = row["metadata"]["decoded"]["step"].as_i64().unwrap();
            let group4 = format!("{:04x}", 0x8000 | (step & 0x3FFF));
            assert_eq!(&id[19..23], group4, "{name}: {id}");
            let masked = |s: &str| format!("{}{}", &s[..19], &s[23..]);
            assert!(
                minted.iter().any(|m| masked(m) == masked(id)),
                "{name}: {id} not minted"
            );

            let cp = &row["checkpoint"]["decoded"];
            assert!(
                stamps.iter().any(|t| t == &cp["ts"]),
                "{name}: ts {}",
                cp["ts"]
            );
            for v in cp["channel_versions"].as_object().unwrap().values() {
                let (_, fraction) = v.as_str().unwrap().split_once('.').unwrap();
                assert!(
                    fractions.iter().any(|f| f == fraction),
                    "{name}: version {v}"
                );
            }
        }
    }
}

#[test]
fn py_random_matches_cpython_for_small_and_wide_seeds() {
    // python3 -c "import random; r=random.Random(s); print(r.random(), r.getrandbits(1),
    //   r.getrandbits(14), r.getrandbits(32), r.getrandbits(33), r.getrandbits(48),
    //   r.getrandbits(64), r.getrandbits(0), r.random())"
    let table: [(u64, f64, [u64; 7], f64); 6] = [
        (
            0,
            0.8444218515250481,
            [
                1,
                14585,
                1806341205,
                173879092,
                143911320859898,
                7469716379221213669,
                0,
            ],
            0.9182343317851318,
        ),
        (
            1,
            0.13436424411240122,
            [
                1,
                13144,
                3280387012,
                271041745,
                139449504623497,
                8291646586825371460,
                0,
            ],
            0.47224524357611664,
        ),
        (
            4294967295,
            0.6353574441341173,
            [
                0,
                3528,
                2608619700,
                2243681748,
                95711641307387,
                7030353235611988735,
                0,
            ],
            0.672356431846114,
        ),
        (
            4294967296,
            0.11299430095636409,
            [
                0,
                15314,
                71624475,
                4392986381,
                226769446085523,
                6115302124401738593,
                0,
            ],
            0.8378434445381762,
        ),
        (
            1099511640121,
            0.31036222241287226,
            [
                0,
                63,
                2291790675,
                597313338,
                228372594519618,
                18194322415494016955,
                0,
            ],
            0.6675956106799964,
        ),
        (
            u64::MAX,
            0.021825695401270107,
            [
                0,
                10137,
                910393425,
                6253746770,
                258836612190590,
                6844557653115116486,
                0,
            ],
            0.7679927478143009,
        ),
    ];
    for (seed, first, bits, last) in table {
        let mut r = PyRandom::new(seed);
        assert_eq!(r.random(), first, "seed {seed}");
        for (k, want) in [1, 14, 32, 33, 48, 64, 0].into_iter().zip(bits) {
            assert_eq!(r.getrandbits(k), want, "seed {seed}, getrandbits({k})");
        }
        assert_eq!(r.random(), last, "seed {seed}");
    }
}

#[test]
fn py_random_1235_gives_the_trace_fractions() {
    let mut r = PyRandom::new(1235);
    assert_eq!(python_float_repr(r.random()), "0.9085506848193617");
    assert_eq!(python_float_repr(r.random()), "0.4247091824969128");
    assert_eq!(python_float_repr(r.random()), "0.8418417915109482");
}

#[test]
fn float_repr_matches_cpython_on_the_fixture_table() {
    let table = include_str!("fixtures/float_repr.tsv");
    let mut checked = 0;
    for line in table.lines().filter(|l| !l.starts_with('#')) {
        let cols: Vec<&str> = line.split('\t').collect();
        let x = f64::from_bits(u64::from_str_radix(cols[0], 16).unwrap());
        assert_eq!(python_float_repr(x), cols[1], "repr of {x:e} ({})", cols[0]);
        assert_eq!(
            &format_version(1, x)[33..],
            cols[2],
            "format(x, '016') of {}",
            cols[1]
        );
        checked += 1;
    }
    assert!(checked > 1000, "only {checked} rows");
}

#[test]
fn ts_of_the_golden_clock() {
    assert_eq!(
        now_ts(&golden_ts_clock()),
        "2025-01-01T00:00:00.001001+00:00"
    );
    assert_eq!(format_ts(BASE_NS), "2025-01-01T00:00:00+00:00");
}

#[test]
fn fake_clock_counts_its_readings() {
    let clock = FakeClock::new(10, 3);
    assert_eq!((clock.now_ns(), clock.now_ns()), (13, 16));
    assert_eq!(clock.calls(), 2);
}

#[test]
fn os_random_stays_in_range() {
    let mut r = OsRandom::new();
    for _ in 0..1000 {
        let x = r.random();
        assert!((0.0..1.0).contains(&x));
        assert!(r.getrandbits(14) < 1 << 14);
    }
    // Two OS-seeded generators are independent: 64 equal bits would be a broken seed.
    assert_ne!(
        OsRandom::new().getrandbits(64),
        OsRandom::new().getrandbits(64)
    );
}

#[test]
fn system_ids_are_process_wide_and_increasing() {
    let ids = IdGenerator::system();
    assert!(std::ptr::eq(ids, IdGenerator::system()));
    let a = ids.uuid6(3);
    let b = ids.uuid6(4);
    assert!(a < b, "{a} !< {b}");
    assert_eq!(&a[19..23], "8003");
}
