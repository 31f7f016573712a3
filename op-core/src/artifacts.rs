//! Generated op artifacts: the files that describe a registry's ops, written
//! into a committed folder and checked for staleness in CI.
//!
//! - `ops.pbtxt`: every op as one TensorFlow `OpList` in text format (as
//!   TensorFlow's own `ops.pbtxt`), sorted by name, docs included;
//! - `reference.md`: a Markdown reference, one section per op: summary and
//!   description, signature, inputs, outputs (with any full type) and
//!   attrs (constraints, defaults, docs), kernels by device and dtype,
//!   shape function, gradient and source location;
//! - `coverage.md`: a Markdown matrix of op x device x dtype saying where
//!   a kernel exists and where gradients flow.
//!
//! Why a library module rather than only a developer command: a crate with
//! ops of its own generates the same files for its ops from its own xtask
//! or binary, so it needs a function it can call, and the runtime crate is
//! the one every such crate already depends on (op-kernels is not needed).
//!
//! The output is deterministic (sorted, no timestamps), and source
//! locations are paths relative to the workspace (`file!()` already gives
//! those for workspace members; absolute paths are made relative to
//! [`Artifacts::source_root`], or cut to `crate/src/...`), so the files
//! can be committed and compared byte for byte.
//!
//! ```
//! use op_core::artifacts::Artifacts;
//! use op_core::registry::{OpRegistration, Registry};
//! use op_core::OpDefBuilder;
//!
//! static HALVE: OpRegistration = OpRegistration::new(
//!     "Halve",
//!     || OpDefBuilder::new("Halve").input("x: float").output("y: float").doc("Halves x.").build(),
//!     "my-ops/src/lib.rs",
//!     12,
//! );
//! let registry = Registry::new([&HALVE], []);
//! let artifacts = Artifacts::new(&registry).generated_by("cargo run --bin my-ops-codegen");
//! let names: Vec<&str> = artifacts.files().iter().map(|f| f.name).collect();
//! assert_eq!(names, ["ops.pbtxt", "reference.md", "coverage.md"]);
//! assert!(artifacts.reference().contains("## `Halve`"));
//! assert!(artifacts.reference().contains("`my-ops/src/lib.rs:12`"));
//!
//! // In a downstream xtask: write, or check what is committed.
//! let dir = std::env::temp_dir().join(format!("op-core-artifacts-doc-{}", std::process::id()));
//! artifacts.write(&dir)?;
//! assert!(artifacts.check(&dir)?.is_empty());
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), std::io::Error>(())
//! ```

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

use op_spec::{ArgDef, ArgType, AttrKind, DType, DeviceType, OpDef, pbtxt};

use crate::gradient::is_trainable;
use crate::registry::{KernelRegistration, OpEntry, Registry};

/// The name of the `OpList` file.
pub const OP_LIST: &str = "ops.pbtxt";
/// The name of the Markdown op reference.
pub const REFERENCE: &str = "reference.md";
/// The name of the Markdown coverage matrix.
pub const COVERAGE: &str = "coverage.md";

/// A caller's choice of ops.
type Filter<'r> = Box<dyn Fn(&OpEntry) -> bool + 'r>;

/// The generated files for a registry's ops (all of them, or those a
/// filter keeps), configured with the builder methods.
pub struct Artifacts<'r> {
    registry: &'r Registry,
    keep: Option<Filter<'r>>,
    declared_under: Option<String>,
    source_root: Option<PathBuf>,
    generated_by: String,
    title: String,
}

/// One generated file: its name in the output folder and its contents.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GeneratedFile {
    /// The file name, e.g. `ops.pbtxt`.
    pub name: &'static str,
    /// The whole text of the file.
    pub contents: String,
}

/// A committed file that does not match what would be generated now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StaleFile {
    /// The path of the committed file (the folder joined with the name).
    pub path: PathBuf,
    /// How it differs.
    pub problem: Staleness,
}

/// How a committed file differs from the generated one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Staleness {
    /// The file does not exist.
    Missing,
    /// The file exists with other contents; the first line (1-based) that
    /// differs.
    Differs {
        /// The first line that differs.
        line: usize,
    },
}

impl fmt::Display for StaleFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.problem {
            Staleness::Missing => write!(f, "{}: missing", self.path.display()),
            Staleness::Differs { line } => write!(
                f,
                "{}: stale (first difference at line {line})",
                self.path.display()
            ),
        }
    }
}

/// Whether an op has a gradient, as the registry says.
enum GradientState {
    None,
    Registered(String),
    NotDifferentiable(String),
    Conflict,
}

/// A row of the coverage matrix: one op on one device (or on none, for
/// an op without kernels).
struct Row<'a> {
    op: &'a str,
    device: Option<DeviceType>,
    axis: Axis<'a>,
    /// The number of kernels per column.
    cells: BTreeMap<Column, usize>,
    /// The dtypes the op allows for the arg the matrix shows.
    allowed: Vec<DType>,
    gradient: &'a GradientState,
}

/// A column of the coverage matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Column {
    /// Kernels for this dtype.
    Type(DType),
    /// A kernel without type constraints for an op whose type attr allows
    /// any type.
    Any,
    /// A kernel of an op with no typed inputs or outputs.
    Untyped,
}

impl Column {
    fn header(self) -> String {
        match self {
            Column::Type(t) => t.to_string(),
            Column::Any => "any".to_owned(),
            Column::Untyped => "untyped".to_owned(),
        }
    }
}

impl<'r> Artifacts<'r> {
    /// The artifacts of every op in `registry`, titled "Ops", saying they
    /// are generated by `cargo xtask codegen`.
    pub fn new(registry: &'r Registry) -> Artifacts<'r> {
        Artifacts {
            registry,
            keep: None,
            declared_under: None,
            source_root: None,
            generated_by: "cargo xtask codegen".to_owned(),
            title: "Ops".to_owned(),
        }
    }

    /// Only the ops `keep` accepts: a downstream crate keeps its own, e.g.
    /// `|op| op.registration().file.starts_with("my-ops/")`.
    pub fn only(mut self, keep: impl Fn(&OpEntry) -> bool + 'r) -> Artifacts<'r> {
        self.keep = Some(Box::new(keep));
        self
    }

    /// Only the ops declared in files under `prefix` (a path relative to
    /// the workspace, as the reference shows it, e.g. `my-ops/` or `src/`
    /// for a crate that is its own workspace): how a downstream crate
    /// keeps its own ops out of a registry that also holds those of its
    /// dependencies.
    pub fn declared_under(mut self, prefix: impl Into<String>) -> Artifacts<'r> {
        self.declared_under = Some(prefix.into());
        self
    }

    /// Source locations under `root` are written relative to it (paths
    /// that `file!()` gives are already relative to the workspace for
    /// workspace members; this covers absolute ones).
    pub fn source_root(mut self, root: impl Into<PathBuf>) -> Artifacts<'r> {
        self.source_root = Some(root.into());
        self
    }

    /// The command the Markdown files name as their generator.
    pub fn generated_by(mut self, command: impl Into<String>) -> Artifacts<'r> {
        self.generated_by = command.into();
        self
    }

    /// The title of the Markdown files ("Ops" unless set): the reference
    /// is "TITLE: reference", the matrix "TITLE: coverage".
    pub fn title(mut self, title: impl Into<String>) -> Artifacts<'r> {
        self.title = title.into();
        self
    }

    /// The ops written, sorted by name.
    pub fn ops(&self) -> Vec<&'r OpEntry> {
        self.registry
            .ops()
            .filter(|op| self.keep.as_ref().is_none_or(|keep| keep(op)))
            .filter(|op| {
                self.declared_under.as_deref().is_none_or(|prefix| {
                    let file = op.registration().file;
                    relative_source(file, self.source_root.as_deref()).starts_with(prefix)
                })
            })
            .collect()
    }

    /// Every generated file, in the order [`OP_LIST`], [`REFERENCE`],
    /// [`COVERAGE`].
    pub fn files(&self) -> Vec<GeneratedFile> {
        vec![
            GeneratedFile {
                name: OP_LIST,
                contents: self.op_list(),
            },
            GeneratedFile {
                name: REFERENCE,
                contents: self.reference(),
            },
            GeneratedFile {
                name: COVERAGE,
                contents: self.coverage(),
            },
        ]
    }

    /// Writes every file into `dir` (made if missing), rewriting only the
    /// files whose contents changed; returns the paths rewritten.
    pub fn write(&self, dir: &Path) -> io::Result<Vec<PathBuf>> {
        std::fs::create_dir_all(dir)?;
        let mut written = Vec::new();
        for file in self.files() {
            let path = dir.join(file.name);
            if std::fs::read(&path).ok().as_deref() != Some(file.contents.as_bytes()) {
                std::fs::write(&path, &file.contents)?;
                written.push(path);
            }
        }
        Ok(written)
    }

    /// Compares the files in `dir` with what would be generated now,
    /// without writing: the stale or missing ones (empty when everything
    /// is up to date). Errors only when a file exists but cannot be read.
    pub fn check(&self, dir: &Path) -> io::Result<Vec<StaleFile>> {
        let mut stale = Vec::new();
        for file in self.files() {
            let path = dir.join(file.name);
            let problem = match std::fs::read(&path) {
                Err(e) if e.kind() == io::ErrorKind::NotFound => Some(Staleness::Missing),
                Err(e) => {
                    return Err(io::Error::new(e.kind(), format!("{}: {e}", path.display())));
                }
                Ok(bytes) if bytes == file.contents.as_bytes() => None,
                Ok(bytes) => Some(Staleness::Differs {
                    line: first_difference(&String::from_utf8_lossy(&bytes), &file.contents),
                }),
            };
            if let Some(problem) = problem {
                stale.push(StaleFile { path, problem });
            }
        }
        Ok(stale)
    }

    /// `ops.pbtxt`: the ops as one `OpList` in TensorFlow's text format,
    /// sorted by name.
    pub fn op_list(&self) -> String {
        let ops = self.ops();
        pbtxt::op_list_to_string(ops.iter().map(|op| op.def().as_ref()))
    }

    /// `reference.md`: the Markdown op reference.
    pub fn reference(&self) -> String {
        let ops = self.ops();
        let mut out = String::new();
        let mut anchors = Anchors::default();
        let title = format!("{}: reference", self.title);
        anchors.add(&title);
        line(&mut out, format_args!("# {title}"));
        line(&mut out, format_args!(""));
        line(&mut out, format_args!("{}", self.notice()));
        line(&mut out, format_args!(""));
        line(
            &mut out,
            format_args!(
                "{} op(s). Per op: its docs, signature, inputs, outputs and attrs (with their constraints, defaults and docs), kernels by device and dtype, shape function, gradient and where it is declared. The same ops in TensorFlow's text format: [`{OP_LIST}`]({OP_LIST}); kernels and gradients by dtype: [`{COVERAGE}`]({COVERAGE}).",
                ops.len()
            ),
        );
        line(&mut out, format_args!(""));
        let sections: Vec<(String, String)> = ops
            .iter()
            .map(|op| {
                let heading = format!("`{}`", op.def().name);
                let anchor = anchors.add(&heading);
                (anchor, self.op_section(op, &heading))
            })
            .collect();
        for (op, (anchor, _)) in ops.iter().zip(&sections) {
            let summary = plain_links(first_line(&op.def().summary));
            if summary.is_empty() {
                line(&mut out, format_args!("- [`{}`](#{anchor})", op.def().name));
            } else {
                line(
                    &mut out,
                    format_args!("- [`{}`](#{anchor}): {summary}", op.def().name),
                );
            }
        }
        for (_, section) in sections {
            line(&mut out, format_args!(""));
            out.push_str(&section);
        }
        out
    }

    /// `coverage.md`: the Markdown matrix of op x device x dtype.
    pub fn coverage(&self) -> String {
        let ops = self.ops();
        let mut out = String::new();
        line(&mut out, format_args!("# {}: coverage", self.title));
        line(&mut out, format_args!(""));
        line(&mut out, format_args!("{}", self.notice()));
        line(&mut out, format_args!(""));

        let gradients: Vec<GradientState> = ops.iter().map(|op| self.gradient(op)).collect();
        let kernels: usize = ops.iter().map(|op| op.kernels().len()).sum();
        let count = |f: fn(&GradientState) -> bool| gradients.iter().filter(|g| f(g)).count();
        let with_shape = ops.iter().filter(|op| op.shape_fn().is_some()).count();
        let without_kernels = ops.iter().filter(|op| op.kernels().is_empty()).count();
        let mut by_device = String::new();
        for device in DeviceType::ALL {
            let n: usize = ops
                .iter()
                .map(|op| op.kernels().iter().filter(|k| k.device == device).count())
                .sum();
            if n > 0 {
                let _ = write!(by_device, "{}{device}: {n}", sep(&by_device));
            }
        }
        line(
            &mut out,
            format_args!(
                "{} op(s), {kernels} kernel(s){}; {} op(s) without kernels; {with_shape} with a shape function; {} with a gradient, {} not differentiable, {} with neither{}.",
                ops.len(),
                if by_device.is_empty() {
                    String::new()
                } else {
                    format!(" ({by_device})")
                },
                without_kernels,
                count(|g| matches!(g, GradientState::Registered(_))),
                count(|g| matches!(g, GradientState::NotDifferentiable(_))),
                count(|g| matches!(g, GradientState::None)),
                match count(|g| matches!(g, GradientState::Conflict)) {
                    0 => String::new(),
                    n => format!(", {n} with conflicting gradient registrations"),
                },
            ),
        );
        line(&mut out, format_args!(""));
        line(
            &mut out,
            format_args!(
                "The dtype columns are the values of the type attr in the `attr` column: `T` when the op's kernels are registered by it, otherwise the one they are registered by with the most types; for an op whose kernels have no type constraints, the type of its first input (or output): the attr, or a fixed type (`attr` empty). A cell: `K` a kernel for that device and dtype (`K2`, ... when several, e.g. one per value of another type attr); `K G` a kernel, and gradients flow (the op has a gradient and the dtype is trainable); `-` the op allows the dtype but has no kernel for it on that device; empty: the op does not allow it. `any`: a kernel without type constraints for a type attr that allows every type; `untyped`: an op with no inputs or outputs. Columns are in the order of TensorFlow's `DataType` enum."
            ),
        );
        line(&mut out, format_args!(""));

        // Rows first, to know the columns.
        let mut rows: Vec<Row<'_>> = Vec::new();
        let mut columns: BTreeSet<Column> = BTreeSet::new();
        for (op, gradient) in ops.iter().zip(&gradients) {
            let def = op.def();
            let axis = Axis::of(op);
            let allowed = axis.allowed(def);
            let mut devices: Vec<Option<DeviceType>> = DeviceType::ALL
                .into_iter()
                .filter(|d| op.kernels().iter().any(|k| k.device == *d))
                .map(Some)
                .collect();
            if devices.is_empty() {
                devices.push(None);
            }
            for device in devices {
                let mut cells: BTreeMap<Column, usize> = BTreeMap::new();
                for kernel in op.kernels().iter().filter(|k| Some(k.device) == device) {
                    for column in axis.columns(def, kernel) {
                        *cells.entry(column).or_default() += 1;
                    }
                }
                columns.extend(cells.keys().copied());
                // Allowed dtypes get a column even without any kernel:
                // the gaps are what the matrix is for.
                columns.extend(allowed.iter().copied().map(Column::Type));
                rows.push(Row {
                    op: &def.name,
                    device,
                    axis,
                    cells,
                    allowed: allowed.clone(),
                    gradient,
                });
            }
        }
        let columns: Vec<Column> = columns.into_iter().collect();
        let mut header = "| op | device | attr |".to_owned();
        let mut rule = "| --- | --- | --- |".to_owned();
        for column in &columns {
            let _ = write!(header, " {} |", column.header());
            rule.push_str(" :-: |");
        }
        header.push_str(" gradient |");
        rule.push_str(" --- |");
        line(&mut out, format_args!("{header}"));
        line(&mut out, format_args!("{rule}"));
        for row in &rows {
            let device = row
                .device
                .map_or_else(|| "none".to_owned(), |d| d.to_string());
            let flows = matches!(row.gradient, GradientState::Registered(_));
            let attr = match row.axis {
                Axis::Attr(a) => format!("`{a}`"),
                Axis::Fixed(_) | Axis::Untyped => String::new(),
            };
            let mut text = format!("| `{}` | {device} | {attr} |", row.op);
            for column in &columns {
                let cell = match (row.cells.get(column), column) {
                    (Some(&n), _) => {
                        let k = if n == 1 {
                            "K".to_owned()
                        } else {
                            format!("K{n}")
                        };
                        let trainable = match column {
                            Column::Type(t) => is_trainable(*t),
                            // Any type includes the float ones.
                            Column::Any => true,
                            Column::Untyped => false,
                        };
                        if flows && trainable {
                            format!("{k} G")
                        } else {
                            k
                        }
                    }
                    (None, Column::Type(t)) if row.allowed.contains(t) => "-".to_owned(),
                    (None, _) => String::new(),
                };
                let _ = write!(text, " {cell} |");
            }
            let gradient = match row.gradient {
                GradientState::None => "",
                GradientState::Registered(_) => "gradient",
                GradientState::NotDifferentiable(_) => "not differentiable",
                GradientState::Conflict => "conflict",
            };
            let _ = write!(text, " {gradient} |");
            line(&mut out, format_args!("{text}"));
        }
        out
    }

    fn notice(&self) -> String {
        format!(
            "<!-- Generated by `{}` from the op registry: do not edit. -->",
            self.generated_by
        )
    }

    fn gradient(&self, op: &OpEntry) -> GradientState {
        match self.registry.gradient(&op.def().name) {
            Ok(None) => GradientState::None,
            Ok(Some(g)) => {
                let at = self.source(g.file, g.line);
                match g.functions {
                    Some(_) => GradientState::Registered(at),
                    None => GradientState::NotDifferentiable(at),
                }
            }
            Err(_) => GradientState::Conflict,
        }
    }

    fn op_section(&self, op: &OpEntry, heading: &str) -> String {
        let def = op.def();
        let mut out = String::new();
        line(&mut out, format_args!("## {heading}"));
        line(&mut out, format_args!(""));
        // TensorFlow's summary is the docs' first line; when that line
        // ends mid-sentence, the description goes on with it in one
        // paragraph.
        let summary = plain_links(&def.summary);
        let description = plain_links(def.description.trim_end());
        let unfinished = !summary.trim_end().ends_with(['.', '!', '?', ':']);
        match (summary.is_empty(), description.is_empty()) {
            (true, true) => {}
            (false, true) => line(&mut out, format_args!("{summary}\n")),
            (true, false) => line(&mut out, format_args!("{description}\n")),
            (false, false) if unfinished => {
                line(&mut out, format_args!("{summary}\n{description}\n"))
            }
            (false, false) => line(&mut out, format_args!("{summary}\n\n{description}\n")),
        }
        if let Some(dep) = &def.deprecation {
            line(
                &mut out,
                format_args!(
                    "**Deprecated** at GraphDef version {}: {}",
                    dep.version, dep.explanation
                ),
            );
            line(&mut out, format_args!(""));
        }
        line(&mut out, format_args!("```text"));
        line(&mut out, format_args!("{}", signature(def)));
        line(&mut out, format_args!("```"));
        line(&mut out, format_args!(""));
        for (title, args) in [("Inputs", &def.inputs), ("Outputs", &def.outputs)] {
            if args.is_empty() {
                continue;
            }
            line(&mut out, format_args!("{title}:"));
            line(&mut out, format_args!(""));
            for arg in args {
                let mut label = format!("`{}`", arg.to_spec());
                if let Some(full_type) = &arg.full_type {
                    label.push_str(&format!(" (full type `{full_type}`)"));
                }
                item(&mut out, &label, &plain_links(&arg.description));
            }
            line(&mut out, format_args!(""));
        }
        if !def.attrs.is_empty() {
            line(&mut out, format_args!("Attrs:"));
            line(&mut out, format_args!(""));
            for attr in &def.attrs {
                let mut label = format!("`{}`", attr.to_spec());
                if def.is_inferred_attr(&attr.name) {
                    label.push_str(" (inferred from the inputs)");
                }
                item(&mut out, &label, &plain_links(&attr.description));
            }
            line(&mut out, format_args!(""));
        }
        let flags: Vec<&str> = [
            (def.is_stateful, "stateful"),
            (def.is_commutative, "commutative"),
            (def.is_aggregate, "aggregate"),
            (def.allows_uninitialized_input, "allows uninitialized input"),
            (
                def.is_distributed_communication,
                "distributed communication",
            ),
        ]
        .into_iter()
        .filter_map(|(set, name)| set.then_some(name))
        .collect();
        if !flags.is_empty() {
            line(&mut out, format_args!("Properties: {}.", flags.join(", ")));
            line(&mut out, format_args!(""));
        }
        line(&mut out, format_args!("Kernels:"));
        line(&mut out, format_args!(""));
        if op.kernels().is_empty() {
            line(&mut out, format_args!("- none"));
        }
        // When every kernel is registered by one and the same attr, the
        // kernels are listed by its values alone.
        let type_attrs = def
            .attrs
            .iter()
            .filter(|a| a.ty.kind == AttrKind::Type)
            .count();
        let by: Option<&str> = match op.kernels().first().map(|k| k.constraints) {
            Some([first]) => op
                .kernels()
                .iter()
                .all(|k| matches!(k.constraints, [c] if c.attr == first.attr))
                .then_some(first.attr),
            _ => None,
        };
        for device in DeviceType::ALL {
            let mut kernels: Vec<&KernelRegistration> = op
                .kernels()
                .iter()
                .copied()
                .filter(|k| k.device == device)
                .collect();
            if kernels.is_empty() {
                continue;
            }
            kernels.sort_by_key(|k| {
                let dtypes: Vec<(DType, &str)> =
                    k.constraints.iter().map(|c| (c.dtype, c.attr)).collect();
                (dtypes, k.name)
            });
            let described: Vec<String> = kernels
                .iter()
                .map(|k| describe_kernel(k, by.is_some()))
                .collect();
            let device = match by {
                Some(attr) if type_attrs > 1 => format!("`{device}` (by `{attr}`)"),
                _ => format!("`{device}`"),
            };
            line(
                &mut out,
                format_args!("- {device}: {}", described.join(", ")),
            );
        }
        line(&mut out, format_args!(""));
        let shape = if op.shape_fn().is_some() { "yes" } else { "no" };
        line(&mut out, format_args!("Shape function: {shape}."));
        line(&mut out, format_args!(""));
        let gradient = match self.gradient(op) {
            GradientState::None => "none registered".to_owned(),
            GradientState::Registered(at) => format!("registered at `{at}`"),
            GradientState::NotDifferentiable(at) => {
                format!("not differentiable (marked at `{at}`)")
            }
            GradientState::Conflict => {
                "conflicting registrations (see `Registry::gradient`)".to_owned()
            }
        };
        line(&mut out, format_args!("Gradient: {gradient}."));
        line(&mut out, format_args!(""));
        let registration = op.registration();
        line(
            &mut out,
            format_args!(
                "Declared at `{}`.",
                self.source(registration.file, registration.line)
            ),
        );
        out
    }

    /// `file:line` with `file` relative to the workspace.
    fn source(&self, file: &str, line: u32) -> String {
        format!(
            "{}:{line}",
            relative_source(file, self.source_root.as_deref())
        )
    }
}

impl fmt::Debug for Artifacts<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Artifacts")
            .field("ops", &self.ops().len())
            .field("filtered", &self.keep.is_some())
            .field("declared_under", &self.declared_under)
            .field("source_root", &self.source_root)
            .field("generated_by", &self.generated_by)
            .field("title", &self.title)
            .finish()
    }
}

/// `file` as a path relative to the workspace, with `/` separators.
///
/// Relative paths (what `file!()` gives for workspace members) are kept.
/// An absolute path under `root` is made relative to it; any other
/// absolute path (a dependency from a registry or git checkout) is cut to
/// its crate folder, `name-1.2.3/src/lib.rs`, so no machine's home folder
/// ends up in a committed file.
pub fn relative_source(file: &str, root: Option<&Path>) -> String {
    let path = Path::new(file);
    if !path.is_absolute() {
        return file.replace('\\', "/");
    }
    if let Some(relative) = root.and_then(|root| path.strip_prefix(root).ok()) {
        return relative.to_string_lossy().replace('\\', "/");
    }
    let normalized = file.replace('\\', "/");
    let parts: Vec<&str> = normalized.split('/').filter(|p| !p.is_empty()).collect();
    // The crate folder is the one holding `src` (the last such, for a
    // crate vendored inside another's `src`).
    match parts.iter().rposition(|p| *p == "src") {
        Some(i) if i > 0 => parts[i - 1..].join("/"),
        _ => parts.last().copied().unwrap_or_default().to_owned(),
    }
}

fn line(out: &mut String, text: fmt::Arguments<'_>) {
    let _ = out.write_fmt(text);
    out.push('\n');
}

fn sep(s: &str) -> &'static str {
    if s.is_empty() { "" } else { ", " }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default().trim()
}

/// A list item `- label: docs`, the docs' later lines indented under it.
fn item(out: &mut String, label: &str, docs: &str) {
    let docs = docs.trim();
    if docs.is_empty() {
        line(out, format_args!("- {label}"));
        return;
    }
    let mut lines = docs.lines();
    line(
        out,
        format_args!("- {label}: {}", lines.next().unwrap_or_default()),
    );
    for rest in lines {
        if rest.trim().is_empty() {
            out.push('\n');
        } else {
            line(out, format_args!("  {}", rest.trim_start()));
        }
    }
}

/// `Name(a: T, b: int32) -> (y: T)`: the op's inputs and outputs as spec
/// strings.
fn signature(def: &OpDef) -> String {
    let args = |args: &[ArgDef]| {
        args.iter()
            .map(ArgDef::to_spec)
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "{}({}) -> ({})",
        def.name,
        args(&def.inputs),
        args(&def.outputs)
    )
}

/// A kernel as `float` (`by_value`: every kernel of the op is registered
/// by the same single attr), or as `T=float Tidx=int32`, with its
/// host-memory args.
fn describe_kernel(kernel: &KernelRegistration, by_value: bool) -> String {
    let mut text = match kernel.constraints {
        [] => "any type (no type constraints)".to_owned(),
        [c] if by_value => c.dtype.to_string(),
        constraints => constraints
            .iter()
            .map(|c| format!("{}={}", c.attr, c.dtype))
            .collect::<Vec<_>>()
            .join(" "),
    };
    if !kernel.host_memory.is_empty() {
        let _ = write!(text, " (host memory: {})", kernel.host_memory.join(" "));
    }
    text
}

/// What the dtype columns of an op's coverage rows are the values of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Axis<'a> {
    /// A type attr: `T` when the kernels are registered by it, otherwise
    /// the one they are registered by with the most distinct types (the
    /// first of those in the op's order on a tie); when no kernel has a
    /// type constraint, the type attr of the op's first input (or output).
    Attr(&'a str),
    /// The fixed type of the op's first input (or output).
    Fixed(DType),
    /// The op has no inputs or outputs.
    Untyped,
}

impl<'a> Axis<'a> {
    fn of(op: &'a OpEntry) -> Axis<'a> {
        let def = op.def();
        let mut best: Option<(&str, usize)> = None;
        for attr in def.attrs.iter().filter(|a| a.ty.kind == AttrKind::Type) {
            let types: BTreeSet<DType> = op
                .kernels()
                .iter()
                .flat_map(|k| k.constraints)
                .filter(|c| c.attr == attr.name)
                .map(|c| c.dtype)
                .collect();
            if types.is_empty() {
                continue;
            }
            if attr.name == "T" {
                return Axis::Attr(&attr.name);
            }
            if best.is_none_or(|(_, n)| types.len() > n) {
                best = Some((&attr.name, types.len()));
            }
        }
        if let Some((attr, _)) = best {
            return Axis::Attr(attr);
        }
        match def.inputs.first().or(def.outputs.first()).map(|a| &a.ty) {
            Some(ArgType::Fixed(t)) => Axis::Fixed(*t),
            Some(ArgType::Attr(a) | ArgType::ListAttr(a)) => Axis::Attr(a),
            None => Axis::Untyped,
        }
    }

    /// The dtypes the op allows on this axis (empty when any).
    fn allowed(self, def: &OpDef) -> Vec<DType> {
        match self {
            Axis::Fixed(t) => vec![t],
            Axis::Attr(a) => def
                .attr(a)
                .and_then(|a| a.allowed_types())
                .map(<[DType]>::to_vec)
                .unwrap_or_default(),
            Axis::Untyped => Vec::new(),
        }
    }

    /// The columns `kernel` covers.
    fn columns(self, def: &OpDef, kernel: &KernelRegistration) -> Vec<Column> {
        match self {
            Axis::Untyped => vec![Column::Untyped],
            Axis::Fixed(t) => vec![Column::Type(t)],
            Axis::Attr(attr) => {
                if let Some(c) = kernel.constraints.iter().find(|c| c.attr == attr) {
                    return vec![Column::Type(c.dtype)];
                }
                // Unconstrained in that attr: every type the op allows.
                match def.attr(attr).and_then(|a| a.allowed_types()) {
                    Some(types) => {
                        let unique: BTreeSet<DType> = types.iter().copied().collect();
                        unique.into_iter().map(Column::Type).collect()
                    }
                    None => vec![Column::Any],
                }
            }
        }
    }
}

/// Doc text for Markdown outside rustdoc: rustdoc's intra-doc links
/// (`` [`Foo`] ``, `` [`math`](super) ``, `[text](crate::a::B)`) resolve
/// nowhere in a plain Markdown file, so they become their text. Code spans
/// and code blocks are left alone.
fn plain_links(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut fenced = false;
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        if fenced || line.trim_start().starts_with("```") {
            out.push_str(line);
            continue;
        }
        plain_links_in_line(line, &mut out);
    }
    out
}

fn plain_links_in_line(line: &str, out: &mut String) {
    let is_rust_path = |target: &str| {
        !target.is_empty()
            && target
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | ':' | '!' | '<' | '>'))
            && !target.contains("://")
    };
    let is_code_span = |t: &str| {
        t.len() > 2 && t.starts_with('`') && t.ends_with('`') && t.matches('`').count() == 2
    };
    let mut in_code = false;
    let mut rest = line;
    while let Some(c) = rest.chars().next() {
        if c == '`' {
            in_code = !in_code;
        } else if c == '['
            && !in_code
            && let Some(close) = rest.find(']')
        {
            let inner = &rest[1..close];
            let after = &rest[close + 1..];
            if let Some(target) = after.strip_prefix('(')
                && let Some(end) = target.find(')')
                && is_rust_path(&target[..end])
                && !inner.contains('[')
            {
                out.push_str(inner);
                rest = &target[end + 1..];
                continue;
            }
            if is_code_span(inner) && !after.starts_with(['(', '[', ':']) {
                out.push_str(inner);
                rest = after;
                continue;
            }
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
}

/// The 1-based number of the first line where `a` and `b` differ.
fn first_difference(a: &str, b: &str) -> usize {
    let mut a_lines = a.split('\n');
    let mut b_lines = b.split('\n');
    let mut n = 1;
    loop {
        match (a_lines.next(), b_lines.next()) {
            (Some(x), Some(y)) if x == y => n += 1,
            _ => return n,
        }
    }
}

/// GitHub's heading anchors: lower case, punctuation dropped, spaces to
/// `-`, and `-1`, `-2`, ... on repeats.
#[derive(Default)]
struct Anchors {
    seen: HashMap<String, usize>,
}

impl Anchors {
    fn add(&mut self, heading: &str) -> String {
        let base: String = heading
            .trim()
            .to_lowercase()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                _ => None,
            })
            .collect();
        let n = self.seen.entry(base.clone()).or_default();
        let anchor = if *n == 0 {
            base.clone()
        } else {
            format!("{base}-{n}")
        };
        *n += 1;
        anchor
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anchors_follow_githubs_rules_and_number_repeats() {
        let mut anchors = Anchors::default();
        assert_eq!(anchors.add("`Examples>ClipByValue`"), "examplesclipbyvalue");
        assert_eq!(anchors.add("Ops: reference"), "ops-reference");
        assert_eq!(anchors.add("`Examples_A>B`"), "examples_ab");
        assert_eq!(anchors.add("`Examples_AB`"), "examples_ab-1");
        assert_eq!(anchors.add("`Examples_A>B`"), "examples_ab-2");
    }

    #[test]
    fn rustdoc_links_become_their_text_and_other_links_stay() {
        assert_eq!(plain_links("see [`Foo`]."), "see `Foo`.");
        assert_eq!(plain_links("see [`math`](super)"), "see `math`");
        assert_eq!(plain_links("[the op](crate::ops::Op)"), "the op");
        assert_eq!(
            plain_links("[`ZeroOut::call`], [docs](https://x.org/a) and [top](#top)"),
            "`ZeroOut::call`, [docs](https://x.org/a) and [top](#top)"
        );
        assert_eq!(
            plain_links("[`a`][b] [`c`]: d [1]"),
            "[`a`][b] [`c`]: d [1]"
        );
        assert_eq!(plain_links("`x[`y`]` [`z`]"), "`x[`y`]` `z`");
        assert_eq!(
            plain_links("```\n[`Foo`]\n```\n[`Foo`]"),
            "```\n[`Foo`]\n```\n`Foo`"
        );
        assert_eq!(plain_links("a [ b ] c [`é`]"), "a [ b ] c `é`");
    }

    #[test]
    fn the_first_difference_is_the_first_line_that_differs() {
        assert_eq!(first_difference("a\nb\n", "a\nx\n"), 2);
        assert_eq!(first_difference("a\n", "a\nb\n"), 2);
        assert_eq!(first_difference("", "a"), 1);
    }
}
