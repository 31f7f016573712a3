//! GraphDefs that TensorFlow 2.21 wrote (`op-graph/tests/data/tensorflow/`,
//! made by `tools/tensorflow/make_fixtures.py` with TensorFlow's own
//! outputs) load and run here with the same results, and still do after
//! our writer rewrote them.

use std::path::{Path, PathBuf};

use op_core::{DType, Registry, Tensor};
use op_graph::{Graph, Session, graphdef};
use opkit::npy;

fn fixture_dirs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../op-graph/tests/data/tensorflow");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("graph.pb").exists())
        .collect();
    dirs.sort();
    assert_eq!(dirs.len(), 4);
    dirs
}

/// Runs `graph` with the fixture's feeds and returns (fetch, value) pairs.
fn run(graph: Graph, dir: &Path) -> Vec<(String, Tensor)> {
    let session = Session::new(graph).unwrap();
    let mut runner = session.runner();
    let mut feeds: Vec<PathBuf> = std::fs::read_dir(dir.join("feeds"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    feeds.sort();
    for feed in feeds {
        let name = feed.file_stem().unwrap().to_str().unwrap().to_owned();
        runner = runner.feed(name.as_str(), npy::read(&feed).unwrap());
    }
    let fetches: Vec<String> = std::fs::read_to_string(dir.join("fetches.txt"))
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    for fetch in &fetches {
        runner = runner.fetch(fetch.as_str());
    }
    let values = runner
        .run()
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    fetches.into_iter().zip(values).collect()
}

/// Whether `got` is TensorFlow's `expected`: same dtype and shape, ints and
/// bools equal, floats within 1e-5 relative (NaNs equal).
fn assert_matches(dir: &Path, fetch: &str, got: &Tensor) {
    let file = dir
        .join("expected")
        .join(format!("{}.npy", fetch.replace(':', "_")));
    let expected = npy::read(&file).unwrap();
    let at = format!("{}: {fetch}", dir.display());
    assert_eq!(got.dtype(), expected.dtype(), "{at}");
    assert_eq!(got.dims(), expected.dims(), "{at}");
    let close = |a: f64, b: f64| {
        (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= 1e-6 + 1e-5 * b.abs()
    };
    match got.dtype() {
        DType::F32 => {
            let (a, b) = (
                got.as_slice::<f32>().unwrap(),
                expected.as_slice::<f32>().unwrap(),
            );
            for (x, y) in a.iter().zip(b) {
                assert!(close(f64::from(*x), f64::from(*y)), "{at}: {a:?} vs {b:?}");
            }
        }
        DType::F64 => {
            let (a, b) = (
                got.as_slice::<f64>().unwrap(),
                expected.as_slice::<f64>().unwrap(),
            );
            for (x, y) in a.iter().zip(b) {
                assert!(close(*x, *y), "{at}: {a:?} vs {b:?}");
            }
        }
        _ => assert_eq!(got, &expected, "{at}"),
    }
}

#[test]
fn tensorflows_graphs_run_here_with_tensorflows_results() {
    let mut checked = 0;
    for dir in fixture_dirs() {
        let graph = graphdef::read(dir.join("graph.pb"), Registry::global()).unwrap();
        for (fetch, value) in run(graph, &dir) {
            assert_matches(&dir, &fetch, &value);
            checked += 1;
        }
    }
    assert_eq!(checked, 131);
}

#[test]
fn the_text_files_load_to_the_same_graphs() {
    for dir in fixture_dirs() {
        let binary = graphdef::read(dir.join("graph.pb"), Registry::global()).unwrap();
        let text = graphdef::read(dir.join("graph.pbtxt"), Registry::global()).unwrap();
        assert_eq!(binary.to_string(), text.to_string(), "{}", dir.display());
    }
}

#[test]
fn rewritten_by_our_writer_they_give_the_same_results() {
    for dir in fixture_dirs() {
        let graph = graphdef::read(dir.join("graph.pb"), Registry::global()).unwrap();
        let shown = graph.to_string();
        let rewritten = graphdef::from_bytes(&graphdef::to_bytes(&graph)).unwrap();
        assert_eq!(rewritten.to_string(), shown, "{}", dir.display());
        for (fetch, value) in run(rewritten, &dir) {
            assert_matches(&dir, &fetch, &value);
        }
    }
}
