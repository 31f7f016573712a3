//! The registry: every op and kernel linked into the program, collected
//! with [`inventory`] on first use, checked for conflicts, and searched when
//! a node needs a kernel.
//!
//! `#[register_op]`, `#[op]` and `#[kernel]` submit an [`OpRegistration`] or
//! [`KernelRegistration`]; they can also be submitted by hand with
//! [`inventory::submit!`].
//!
//! # Linking
//!
//! Registrations live in the crate that declares them, and rustc links a
//! dependency only if the program names it somewhere. A binary that depends
//! on a kernel crate in `Cargo.toml` but never mentions it in code sees
//! none of its ops. Name each such crate once, for example with
//! `use my_kernels as _;` in `main.rs` or in a test file (or call
//! `op_kernels::link()`, which our kernel crate provides for this). Then
//! [`Registry::global`] lists its ops and kernels; printing the registry
//! (`println!("{}", Registry::global())`) shows what got linked.
//!
//! A program can also say which crates it expects, with
//! [`require_linked!`](crate::require_linked)`(my_kernels)`. The check
//! runs when the registry is built (on first use, so at startup): a
//! required crate that submitted no op, kernel or gradient is listed by
//! [`Registry::unlinked`], [`Registry::check`] and the registry's
//! `Display`, and every op lookup ([`Registry::op`], so the first op the
//! program runs) fails with a `FailedPrecondition` error that names the
//! crate and says how to link it. A registration counts for the crate its
//! `module_path` starts with; the macros record it, and a hand-written
//! registration adds `.with_module_path(module_path!())`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::{Arc, LazyLock};

use op_spec::{AttrKind, AttrValue, DType, DeviceType, ListValue, OpDef, SpecErrors};

use crate::error::{quoted, summarized};
use crate::gradient::GradientRegistration;
use crate::kernel::CreateKernelFn;
use crate::op_instance::OpInstance;
use crate::op_instance::{InputTypes, OpInstanceBuilder};
use crate::shape_inference::{PartialShape, ShapeFn};
use crate::tensor::Tensor;
use crate::{Error, Result};

mod linking;
mod loaded;
mod op_kernels_ops;
pub use linking::{LINK_OP_KERNELS, LinkRequirement, MissingOp, UnlinkedCrate};
pub use loaded::LoadHook;
pub use op_kernels_ops::OP_KERNELS_OPS;

/// An op submitted to the registry.
///
/// `#[non_exhaustive]`: built with [`OpRegistration::new`] and the `with_`
/// methods (all `const`, for `inventory::submit!`), so a field added later
/// breaks no one.
///
/// ```
/// use op_core::registry::OpRegistration;
/// use op_core::{OpDefBuilder, shape_inference};
///
/// static HALVE: OpRegistration = OpRegistration::new(
///     "Halve",
///     || OpDefBuilder::new("Halve").input("x: float").output("y: float").build(),
///     file!(),
///     line!(),
/// )
/// .with_shape_fn(shape_inference::library::unchanged);
/// assert_eq!(HALVE.name, "Halve");
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub struct OpRegistration {
    /// The op's name.
    pub name: &'static str,
    /// Builds the op's definition.
    pub build: fn() -> std::result::Result<OpDef, SpecErrors>,
    /// The op's shape function, if it has one (outputs are otherwise of
    /// unknown shape).
    pub shape_fn: Option<ShapeFn>,
    /// Where the op was declared (`file!()`).
    pub file: &'static str,
    /// The line where the op was declared (`line!()`).
    pub line: u32,
    /// The module that declared it (`module_path!()`; empty when not
    /// recorded): its first segment is the crate that
    /// [`require_linked!`](crate::require_linked) counts it for.
    pub module_path: &'static str,
}

/// A kernel submitted to the registry (TensorFlow's `REGISTER_KERNEL_BUILDER`).
///
/// `#[non_exhaustive]`: built with [`KernelRegistration::new`] and the
/// `with_` methods (all `const`, for `inventory::submit!`).
///
/// ```
/// use op_core::registry::{KernelRegistration, TypeConstraint};
/// use op_core::{DType, DeviceType, FnKernel, KernelContext, Result};
///
/// fn halve(ctx: &mut KernelContext<'_>, _: &()) -> Result<()> {
///     ctx.unary(0, 0, 1, |x: &f32| x / 2.0)
/// }
///
/// static HALVE_F32: KernelRegistration = KernelRegistration::new(
///     "Halve",
///     DeviceType::Cpu,
///     "halve",
///     |c| FnKernel::<()>::create(c, halve),
///     file!(),
///     line!(),
/// )
/// .with_constraints(&[TypeConstraint::new("T", DType::F32)]);
/// assert_eq!(HALVE_F32.describe(), "device='cpu'; T=float");
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub struct KernelRegistration {
    /// The op the kernel implements.
    pub op: &'static str,
    /// The type of device it runs on.
    pub device: DeviceType,
    /// The type attr values the kernel is for; a node matches when each
    /// constrained attr has this type (every element, for `list(type)`).
    pub constraints: &'static [TypeConstraint],
    /// Inputs and outputs the kernel keeps in host memory.
    pub host_memory: &'static [&'static str],
    /// The kernel's name in listings and messages, e.g. `zero_out::<f32>`.
    pub name: &'static str,
    /// Creates the kernel for a node.
    pub create: CreateKernelFn,
    /// Where the kernel was declared (`file!()`).
    pub file: &'static str,
    /// The line where the kernel was declared (`line!()`).
    pub line: u32,
    /// The module that declared it (`module_path!()`; empty when not
    /// recorded), as for [`OpRegistration::module_path`].
    pub module_path: &'static str,
}

/// One type constraint of a kernel: attr `attr` must be `dtype`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct TypeConstraint {
    /// The type attr.
    pub attr: &'static str,
    /// The type it must have.
    pub dtype: DType,
}

impl TypeConstraint {
    /// Type attr `attr` must be `dtype`.
    pub const fn new(attr: &'static str, dtype: DType) -> Self {
        TypeConstraint { attr, dtype }
    }
}

impl OpRegistration {
    /// Op `name`, whose definition `build` makes, declared at `file:line`
    /// (`file!()`, `line!()`), with no shape function.
    pub const fn new(
        name: &'static str,
        build: fn() -> std::result::Result<OpDef, SpecErrors>,
        file: &'static str,
        line: u32,
    ) -> Self {
        OpRegistration {
            name,
            build,
            shape_fn: None,
            file,
            line,
            module_path: "",
        }
    }

    /// The same op with this shape function.
    pub const fn with_shape_fn(mut self, shape_fn: ShapeFn) -> Self {
        self.shape_fn = Some(shape_fn);
        self
    }

    /// The same op, declared in module `module_path` (`module_path!()`).
    pub const fn with_module_path(mut self, module_path: &'static str) -> Self {
        self.module_path = module_path;
        self
    }
}

inventory::collect!(OpRegistration);
inventory::collect!(KernelRegistration);

impl KernelRegistration {
    /// Kernel `name` of op `op` for `device`, made by `create`, declared at
    /// `file:line`; with no type constraints and nothing in host memory.
    pub const fn new(
        op: &'static str,
        device: DeviceType,
        name: &'static str,
        create: CreateKernelFn,
        file: &'static str,
        line: u32,
    ) -> Self {
        KernelRegistration {
            op,
            device,
            constraints: &[],
            host_memory: &[],
            name,
            create,
            file,
            line,
            module_path: "",
        }
    }

    /// The same kernel, declared in module `module_path` (`module_path!()`).
    pub const fn with_module_path(mut self, module_path: &'static str) -> Self {
        self.module_path = module_path;
        self
    }

    /// The same kernel, for nodes whose type attrs have these values.
    pub const fn with_constraints(mut self, constraints: &'static [TypeConstraint]) -> Self {
        self.constraints = constraints;
        self
    }

    /// The same kernel, keeping these inputs and outputs in host memory.
    pub const fn with_host_memory(mut self, host_memory: &'static [&'static str]) -> Self {
        self.host_memory = host_memory;
        self
    }

    /// `device='cpu'; T=float`: the kernel's device and constraints, as
    /// TensorFlow prints them.
    pub fn describe(&self) -> String {
        let mut text = format!("device='{}'", self.device);
        for c in self.constraints {
            text.push_str(&format!("; {}={}", c.attr, c.dtype));
        }
        text
    }

    fn location(&self) -> String {
        format!("{}:{}", self.file, self.line)
    }

    /// Whether the kernel is for `node` on `device`.
    pub fn matches(&self, node: &OpInstance, device: DeviceType) -> bool {
        self.device == device && self.mismatches(node).next().is_none()
    }

    /// The constraints `node` does not satisfy, with the node's value.
    fn mismatches<'n>(
        &'n self,
        node: &'n OpInstance,
    ) -> impl Iterator<Item = (&'n TypeConstraint, Option<&'n AttrValue>)> {
        self.constraints.iter().filter_map(move |c| {
            let value = node.attr(c.attr);
            let satisfied = match value {
                Some(AttrValue::Type(t)) => *t == c.dtype,
                Some(AttrValue::List(ListValue::Type(ts))) => ts.iter().all(|t| *t == c.dtype),
                _ => false,
            };
            (!satisfied).then_some((c, value))
        })
    }

    fn same_constraints(&self, other: &KernelRegistration) -> bool {
        self.device == other.device
            && self
                .constraints
                .iter()
                .all(|c| other.constraints.contains(c))
            && other
                .constraints
                .iter()
                .all(|c| self.constraints.contains(c))
    }
}

/// What kind of problem a [`Conflict`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConflictKind {
    /// Two ops were registered with one name.
    DuplicateOp,
    /// An op's registration does not parse or validate.
    InvalidOp,
    /// A kernel names an op nobody registered.
    KernelForUnknownOp,
    /// Two kernels of one op have the same device and constraints.
    DuplicateKernel,
    /// A kernel constrains an attr the op does not have, or one that is not
    /// a `type` or `list(type)` attr.
    UnknownConstraintAttr,
    /// A kernel constrains an attr to a type the op does not allow.
    DisallowedConstraintType,
    /// A kernel's `host_memory` names an arg the op does not have.
    UnknownHostMemoryArg,
    /// A gradient names an op nobody registered.
    GradientForUnknownOp,
    /// Two gradients (or a gradient and a `not_differentiable` mark) were
    /// registered for one op.
    DuplicateGradient,
}

impl ConflictKind {
    /// Whether the conflict is about an op's gradient: the op still runs,
    /// only differentiating through it fails.
    pub fn is_about_gradients(self) -> bool {
        matches!(
            self,
            ConflictKind::GradientForUnknownOp | ConflictKind::DuplicateGradient
        )
    }
}

/// A problem found while building the registry. The op it is about cannot
/// run until it is fixed; other ops are unaffected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conflict {
    /// What went wrong.
    pub kind: ConflictKind,
    /// The op involved.
    pub op: String,
    /// A sentence naming the registrations and their source locations.
    pub message: String,
}

impl fmt::Display for Conflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// A registered op: its definition, where it was declared and its kernels.
#[derive(Debug)]
pub struct OpEntry {
    def: Arc<OpDef>,
    registration: &'static OpRegistration,
    kernels: Vec<&'static KernelRegistration>,
}

impl OpEntry {
    /// The op's definition.
    pub fn def(&self) -> &Arc<OpDef> {
        &self.def
    }

    /// The op's registration (name and source location).
    pub fn registration(&self) -> &'static OpRegistration {
        self.registration
    }

    /// A node of this op with inputs of these dtypes and these explicit
    /// attrs (the others inferred or defaulted), checked.
    pub fn instance(
        &self,
        input_types: &[InputTypes],
        attrs: &[(&str, AttrValue)],
    ) -> Result<OpInstance> {
        let mut builder = OpInstanceBuilder::new(&self.def);
        for input in input_types {
            builder = builder.input_types(input.clone());
        }
        for (name, value) in attrs {
            builder = builder.attr(*name, value.clone());
        }
        builder.build()
    }

    /// The op's shape function, if it has one.
    pub fn shape_fn(&self) -> Option<ShapeFn> {
        self.registration.shape_fn
    }

    /// The op's valid kernels, sorted by device, then source location.
    pub fn kernels(&self) -> &[&'static KernelRegistration] {
        &self.kernels
    }
}

/// Every op and kernel, checked.
///
/// ```standalone_crate
/// use op_core::registry::Registry;
///
/// let registry = Registry::global();
/// for op in registry.ops() {
///     println!("{} has {} kernel(s)", op.def().name, op.kernels().len());
/// }
/// assert!(registry.conflicts().is_empty(), "{}", registry.check().unwrap_err());
/// ```
#[derive(Debug, Default)]
pub struct Registry {
    ops: BTreeMap<String, OpEntry>,
    gradients: BTreeMap<&'static str, &'static GradientRegistration>,
    conflicts: Vec<Conflict>,
    /// Kernels for ops nobody registered, by op name: named in the
    /// `NotFound` error of a call to such an op (often a typo in the
    /// kernel's `op = "..."`).
    orphan_kernels: BTreeMap<&'static str, Vec<&'static KernelRegistration>>,
    /// The crates that submitted registrations, valid or not.
    crates: BTreeSet<&'static str>,
    /// What `require_linked!` asked for, sorted by crate, then location.
    requirements: Vec<&'static LinkRequirement>,
    /// The required crates missing from `crates`.
    unlinked: Vec<UnlinkedCrate>,
}

static GLOBAL: LazyLock<Arc<Registry>> = LazyLock::new(|| Arc::new(Registry::from_inventory()));

impl Registry {
    /// The registry of everything submitted with `inventory` in the linked
    /// program, built on first use.
    pub fn global() -> &'static Arc<Registry> {
        &GLOBAL
    }

    /// A registry of everything submitted with `inventory` (see
    /// [`global`](Self::global), which builds this once).
    pub fn from_inventory() -> Registry {
        Registry::new(
            inventory::iter::<OpRegistration>,
            inventory::iter::<KernelRegistration>,
        )
        .with_gradients(inventory::iter::<GradientRegistration>)
        .with_link_requirements(inventory::iter::<LinkRequirement>)
    }

    /// This registry with these gradients (and `not_differentiable`
    /// marks), each checked against the registered ops.
    pub fn with_gradients(
        mut self,
        gradients: impl IntoIterator<Item = &'static GradientRegistration>,
    ) -> Registry {
        let mut gradients: Vec<_> = gradients.into_iter().collect();
        gradients.sort_by_key(|g| (g.op, g.file, g.line));
        for gradient in gradients {
            self.note_crate(gradient.module_path);
            self.add_gradient(gradient);
        }
        self.find_unlinked();
        self
    }

    fn add_gradient(&mut self, gradient: &'static GradientRegistration) {
        let what = |g: &GradientRegistration| match g.functions {
            Some(_) => format!("a gradient at {}", g.location()),
            None => format!("a not_differentiable mark at {}", g.location()),
        };
        if !self.ops.contains_key(gradient.op) {
            let hint = op_spec::suggest::closest(gradient.op, self.ops.keys().map(String::as_str))
                .map(|name| format!("; did you mean '{name}'?"))
                .unwrap_or_default();
            self.conflict(
                ConflictKind::GradientForUnknownOp,
                gradient.op,
                format!(
                    "{} is for op '{}', which is not registered{hint}",
                    what(gradient),
                    gradient.op
                ),
            );
            return;
        }
        if let Some(first) = self.gradients.get(gradient.op) {
            let message = format!(
                "op '{}' has two gradients: {} and {}; remove one",
                gradient.op,
                what(first),
                what(gradient)
            );
            self.conflict(ConflictKind::DuplicateGradient, gradient.op, message);
            return;
        }
        self.gradients.insert(gradient.op, gradient);
    }

    /// The gradient registered for op `name`: `Ok(None)` when there is
    /// none, a registration whose `functions` is `None` when the op is
    /// marked not differentiable, and a `FailedPrecondition` error when
    /// its gradient registrations conflict.
    pub fn gradient(&self, name: &str) -> Result<Option<&'static GradientRegistration>> {
        let conflicts: Vec<String> = self
            .conflicts
            .iter()
            .filter(|c| c.op == name && c.kind == ConflictKind::DuplicateGradient)
            .map(|c| format!("\n  {c}"))
            .collect();
        if !conflicts.is_empty() {
            return Err(Error::failed_precondition(format!(
                "the gradient of op {} cannot be used because its registrations conflict:{}",
                quoted(name),
                conflicts.concat()
            )));
        }
        Ok(self.gradients.get(name).copied())
    }

    /// A registry of exactly these ops and kernels: for tests, and for
    /// programs that assemble their own set.
    pub fn new(
        ops: impl IntoIterator<Item = &'static OpRegistration>,
        kernels: impl IntoIterator<Item = &'static KernelRegistration>,
    ) -> Registry {
        let mut registry = Registry::default();
        // Link order is arbitrary; sorting makes "first" and messages stable.
        let mut ops: Vec<_> = ops.into_iter().collect();
        ops.sort_by_key(|r| (r.name, r.file, r.line));
        for registration in ops {
            registry.note_crate(registration.module_path);
            registry.add_op(registration);
        }
        let mut kernels: Vec<_> = kernels.into_iter().collect();
        kernels.sort_by_key(|k| {
            let dtypes: Vec<DType> = k.constraints.iter().map(|c| c.dtype).collect();
            (k.op, k.device, dtypes, k.file, k.line, k.name)
        });
        for kernel in kernels {
            registry.note_crate(kernel.module_path);
            registry.add_kernel(kernel);
        }
        registry
    }

    fn conflict(&mut self, kind: ConflictKind, op: &str, message: String) {
        self.conflicts.push(Conflict {
            kind,
            op: op.to_owned(),
            message,
        });
    }

    fn add_op(&mut self, registration: &'static OpRegistration) {
        let here = format!("{}:{}", registration.file, registration.line);
        if let Some(first) = self.ops.get(registration.name) {
            let first = first.registration;
            self.conflict(
                ConflictKind::DuplicateOp,
                registration.name,
                format!(
                    "op '{}' is registered twice, at {}:{} and at {here}: rename one (ops can be namespaced, as 'MyProject>{}')",
                    registration.name, first.file, first.line, registration.name
                ),
            );
            return;
        }
        match (registration.build)() {
            Ok(def) if def.name == registration.name => {
                self.ops.insert(
                    def.name.clone(),
                    OpEntry {
                        def: Arc::new(def),
                        registration,
                        kernels: Vec::new(),
                    },
                );
            }
            Ok(def) => self.conflict(
                ConflictKind::InvalidOp,
                registration.name,
                format!(
                    "op '{}' (at {here}) builds a definition named '{}'",
                    registration.name, def.name
                ),
            ),
            Err(errors) => self.conflict(
                ConflictKind::InvalidOp,
                registration.name,
                format!(
                    "op '{}' (at {here}) is invalid: {}",
                    registration.name,
                    errors
                        .errors()
                        .iter()
                        .map(|e| e.one_line())
                        .collect::<Vec<_>>()
                        .join("; ")
                ),
            ),
        }
    }

    fn add_kernel(&mut self, kernel: &'static KernelRegistration) {
        let Some(entry) = self.ops.get(kernel.op) else {
            let hint = op_spec::suggest::closest(kernel.op, self.ops.keys().map(String::as_str))
                .map(|name| format!("; did you mean '{name}'?"))
                .unwrap_or_default();
            self.conflict(
                ConflictKind::KernelForUnknownOp,
                kernel.op,
                format!(
                    "kernel {} ({}) at {} is for op '{}', which is not registered{hint}",
                    kernel.name,
                    kernel.describe(),
                    kernel.location(),
                    kernel.op
                ),
            );
            self.orphan_kernels
                .entry(kernel.op)
                .or_default()
                .push(kernel);
            return;
        };
        let def = entry.def.clone();
        let mut problems = Vec::new();
        for constraint in kernel.constraints {
            match def.attr(constraint.attr) {
                Some(attr) if attr.ty.kind == AttrKind::Type => {
                    if let Some(ListValue::Type(allowed)) = &attr.allowed_values
                        && !allowed.contains(&constraint.dtype)
                    {
                        let allowed: Vec<String> =
                            allowed.iter().map(ToString::to_string).collect();
                        problems.push((
                            ConflictKind::DisallowedConstraintType,
                            format!(
                                "constrains attr '{}' to {}, which the op does not allow (allowed: {})",
                                constraint.attr,
                                constraint.dtype,
                                allowed.join(", ")
                            ),
                        ));
                    }
                }
                _ => {
                    let type_attrs: Vec<&str> = def
                        .attrs
                        .iter()
                        .filter(|a| a.ty.kind == AttrKind::Type)
                        .map(|a| a.name.as_str())
                        .collect();
                    problems.push((
                        ConflictKind::UnknownConstraintAttr,
                        format!(
                            "constrains attr '{}', which is not a type attr of the op (its type attrs: {})",
                            constraint.attr,
                            if type_attrs.is_empty() { "none".to_owned() } else { type_attrs.join(", ") }
                        ),
                    ));
                }
            }
        }
        for arg in kernel.host_memory {
            let known = def
                .inputs
                .iter()
                .chain(&def.outputs)
                .any(|a| a.name == *arg);
            if !known {
                problems.push((
                    ConflictKind::UnknownHostMemoryArg,
                    format!("puts '{arg}' in host memory, but the op has no input or output of that name"),
                ));
            }
        }
        if let Some(other) = entry.kernels.iter().find(|k| k.same_constraints(kernel)) {
            problems.push((
                ConflictKind::DuplicateKernel,
                format!(
                    "has the same device and constraints as kernel {} at {}: remove one, or give them different `types(...)`",
                    other.name,
                    other.location()
                ),
            ));
        }
        if problems.is_empty() {
            if let Some(entry) = self.ops.get_mut(kernel.op) {
                entry.kernels.push(kernel);
            }
            return;
        }
        for (kind, problem) in problems {
            self.conflict(
                kind,
                kernel.op,
                format!(
                    "kernel {} ({}) at {} for op '{}' {problem}",
                    kernel.name,
                    kernel.describe(),
                    kernel.location(),
                    kernel.op
                ),
            );
        }
    }

    /// Every op, sorted by name.
    pub fn ops(&self) -> impl Iterator<Item = &OpEntry> {
        self.ops.values()
    }

    /// The op named `name`, if registered.
    pub fn get(&self, name: &str) -> Option<&OpEntry> {
        self.ops.get(name)
    }

    /// The op named `name`, ready to run: a `NotFound` error (with the
    /// closest registered name and a hint about linking) if nobody
    /// registered it, a `FailedPrecondition` error if its registrations
    /// conflict.
    ///
    /// A kernel registered for an op that does not exist is a conflict
    /// (listed by [`check`](Self::check)), but calling that op is still
    /// `NotFound`: the op is what is missing, and the error names the
    /// kernel as well.
    pub fn op(&self, name: &str) -> Result<&OpEntry> {
        if !self.unlinked.is_empty() {
            return Err(self.unlinked_error(name));
        }
        let conflicts: Vec<&Conflict> = self
            .conflicts
            .iter()
            .filter(|c| {
                c.op == name
                    && !c.kind.is_about_gradients()
                    && c.kind != ConflictKind::KernelForUnknownOp
            })
            .collect();
        if !conflicts.is_empty() {
            let lines: Vec<String> = conflicts.iter().map(|c| format!("\n  {c}")).collect();
            return Err(Error::failed_precondition(format!(
                "op {} cannot run because its registrations conflict:{}",
                quoted(name),
                lines.concat()
            )));
        }
        self.ops.get(name).ok_or_else(|| self.not_registered(name))
    }

    /// The `NotFound` error for op `name`, which nobody registered.
    #[cold]
    fn not_registered(&self, name: &str) -> Error {
        // "is not registered: did you mean 'X'? (...)", or with no
        // suggestion "is not registered (...)": no colon before nothing.
        // An op of op-kernels, unlinked, gets how to link it, not a guess.
        let missing = self.missing_op(name);
        let hint = match missing {
            MissingOp::Unknown => String::new(),
            _ => format!(": {missing}"),
        };
        let elsewhere = match missing.in_op_kernels() {
            false => {
                "; if it is defined in another crate, make sure that crate is linked, e.g. with `use that_crate as _;`"
            }
            true => "",
        };
        let kernels = match self.orphan_kernels.get(name) {
            Some(kernels) => {
                let listed: Vec<String> = kernels
                    .iter()
                    .map(|k| format!("{} ({}) at {}", k.name, k.describe(), k.location()))
                    .collect();
                format!(
                    "; kernels registered for it, with no op: {}",
                    listed.join(", ")
                )
            }
            None => String::new(),
        };
        Error::not_found(format!(
            "op {} is not registered{hint} ({} ops are registered{elsewhere}){kernels}",
            quoted(name),
            self.ops.len()
        ))
    }

    /// The output shapes of a node of op `op` with inputs of these dtypes
    /// and shapes (and, where known, constant input values, by input
    /// index), and these attrs: shape inference without running a kernel.
    /// An op without a shape function gives unknown shapes.
    ///
    /// ```standalone_crate
    /// use op_core::shape_inference::PartialShape;
    /// use op_core::{DType, Registry};
    /// # op_core::inventory::submit! { op_core::registry::OpRegistration::new("Same", || op_core::OpDefBuilder::new("Same").input("x: float").output("y: float").build(), file!(), line!()).with_shape_fn(op_core::shape_inference::library::unchanged) }
    /// let shapes = Registry::global().infer_shapes(
    ///     "Same", &[DType::F32.into()], &[], &["[2,?]".parse()?], &[])?;
    /// assert_eq!(shapes, ["[2,?]".parse::<PartialShape>()?]);
    /// # Ok::<(), op_core::Error>(())
    /// ```
    pub fn infer_shapes(
        &self,
        op: &str,
        input_types: &[InputTypes],
        attrs: &[(&str, AttrValue)],
        input_shapes: &[PartialShape],
        input_tensors: &[Option<&Tensor>],
    ) -> Result<Vec<PartialShape>> {
        let entry = self.op(op)?;
        let node = entry.instance(input_types, attrs)?;
        match entry.shape_fn() {
            Some(f) => {
                crate::shape_inference::infer(entry.def(), &node, f, input_shapes, input_tensors)
            }
            None => Ok(vec![PartialShape::unknown(); node.output_types().len()]),
        }
    }

    /// Every conflict found while building the registry.
    pub fn conflicts(&self) -> &[Conflict] {
        &self.conflicts
    }

    /// `Ok` if there are no conflicts and every crate named by
    /// [`require_linked!`](crate::require_linked) is linked, otherwise a
    /// `FailedPrecondition` error listing every problem: call it in a test
    /// (or first thing in `main`) to catch registration mistakes early.
    /// What is legal but suspect ([`warnings`](Self::warnings): an op
    /// without a shape function) is printed to stderr as `warning: ...`,
    /// not an error.
    pub fn check(&self) -> Result<()> {
        for warning in self.warnings() {
            eprintln!("warning: {warning}");
        }
        let mut parts = Vec::new();
        if !self.conflicts.is_empty() {
            let lines: Vec<String> = self.conflicts.iter().map(|c| format!("\n  {c}")).collect();
            parts.push(format!(
                "{} registration conflict(s):{}",
                self.conflicts.len(),
                lines.concat()
            ));
        }
        if !self.unlinked.is_empty() {
            parts.push(self.describe_unlinked());
        }
        if parts.is_empty() {
            return Ok(());
        }
        Err(Error::failed_precondition(parts.join("\n")))
    }

    /// What is legal but probably a mistake, one line each: today, the ops
    /// without a shape function (with where they are registered). Such an
    /// op runs eagerly, but a graph infers unknown shapes for its outputs,
    /// and what needs static shapes (a `.tflite` export) fails on them.
    /// [`check`](Self::check) prints these to stderr; `opkit ops` lists
    /// them too.
    ///
    /// ```standalone_crate
    /// # op_core::inventory::submit! { op_core::registry::OpRegistration::new("Shapeless", || op_core::OpDefBuilder::new("Shapeless").input("x: float").output("y: float").build(), file!(), line!()) }
    /// let warnings = op_core::Registry::global().warnings();
    /// assert!(warnings[0].starts_with("op 'Shapeless' has no shape function"), "{warnings:?}");
    /// ```
    pub fn warnings(&self) -> Vec<String> {
        self.ops
            .values()
            .filter(|op| op.shape_fn().is_none())
            .map(|op| {
                let r = op.registration;
                format!(
                    "op {} has no shape function ({}:{}): graphs give its outputs unknown \
                     shapes, and a .tflite export of them fails; give it one (`shape = \
                     \"...\"` or `shape_fn = ...` on #[register_op] and #[op])",
                    quoted(&op.def.name),
                    r.file,
                    r.line
                )
            })
            .collect()
    }

    /// The kernel of op `entry` for `node` on `device`.
    ///
    /// When none matches, the `NotFound` error names the op, the node's
    /// attrs, every registered kernel with its device and constraints, and
    /// the closest one with how it differs.
    pub fn select_kernel(
        &self,
        entry: &OpEntry,
        node: &OpInstance,
        device: DeviceType,
    ) -> Result<&'static KernelRegistration> {
        let mut matching = entry.kernels.iter().filter(|k| k.matches(node, device));
        match (matching.next(), matching.next()) {
            (Some(kernel), None) => Ok(kernel),
            (Some(first), Some(second)) => Err(Error::failed_precondition(format!(
                "op '{}': several kernels match device '{device}' with attrs {}: {} ({}) at {} and {} ({}) at {}; make their `types(...)` disjoint",
                entry.def.name,
                describe_attrs(node),
                first.name,
                first.describe(),
                first.location(),
                second.name,
                second.describe(),
                second.location(),
            ))),
            (None, _) => Err(self.no_kernel_error(entry, node, device)),
        }
    }

    fn no_kernel_error(&self, entry: &OpEntry, node: &OpInstance, device: DeviceType) -> Error {
        let op = &entry.def.name;
        let mut message = format!(
            "no kernel for op '{op}' on device '{device}' with attrs {}",
            describe_attrs(node)
        );
        if entry.kernels.is_empty() {
            message.push_str(
                "\n  the op has no kernels at all: if they are defined in another crate, make sure that crate is linked, e.g. with `use that_crate as _;`",
            );
            return Error::not_found(message);
        }
        message.push_str("\n  registered kernels:");
        for k in &entry.kernels {
            message.push_str(&format!(
                "\n    {}  ({} at {})",
                k.describe(),
                k.name,
                k.location()
            ));
        }
        let score =
            |k: &KernelRegistration| usize::from(k.device != device) + k.mismatches(node).count();
        let best = entry.kernels.iter().map(|k| score(k)).min().unwrap_or(0);
        let closest: Vec<_> = entry.kernels.iter().filter(|k| score(k) == best).collect();
        if let [k] = closest.as_slice() {
            let mut differences = Vec::new();
            if k.device != device {
                differences.push(format!("it runs on '{}', not '{device}'", k.device));
            }
            for (c, value) in k.mismatches(node) {
                let actual = value.map_or_else(|| "unset".to_owned(), ToString::to_string);
                differences.push(format!(
                    "it needs {}={}, the node has {actual}",
                    c.attr, c.dtype
                ));
            }
            message.push_str(&format!(
                "\n  closest: {} ({}): {}",
                k.name,
                k.describe(),
                differences.join("; ")
            ));
        } else {
            // Several equally close: say what the kernels cover instead.
            let mut covered: Vec<(&str, Vec<DType>)> = Vec::new();
            for k in entry.kernels.iter().filter(|k| k.device == device) {
                for c in k.constraints {
                    match covered.iter_mut().find(|(a, _)| *a == c.attr) {
                        Some((_, types)) if !types.contains(&c.dtype) => types.push(c.dtype),
                        Some(_) => {}
                        None => covered.push((c.attr, vec![c.dtype])),
                    }
                }
            }
            for (attr, mut types) in covered {
                types.sort();
                let names: Vec<String> = types.iter().map(ToString::to_string).collect();
                message.push_str(&format!(
                    "\n  kernels on '{device}' cover {attr} in {{{}}}",
                    names.join(", ")
                ));
            }
        }
        Error::not_found(message)
    }
}

fn describe_attrs(node: &OpInstance) -> String {
    if node.attrs().is_empty() {
        return "(none)".to_owned();
    }
    let parts: Vec<String> = node
        .attrs()
        .iter()
        // A value may be a caller's string: shown at a bounded length.
        .map(|(name, value)| format!("{name}={}", summarized(value)))
        .collect();
    parts.join(", ")
}

impl fmt::Display for Registry {
    /// Lists every op with its source location, kernels and gradient, then
    /// any conflicts and any required crate that is not linked.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{} op(s):", self.ops.len())?;
        for entry in self.ops.values() {
            let r = entry.registration;
            writeln!(f, "  {}  ({}:{})", entry.def.name, r.file, r.line)?;
            for k in &entry.kernels {
                write!(f, "    kernel {}: {}", k.name, k.describe())?;
                if !k.host_memory.is_empty() {
                    write!(f, "; host_memory: {}", k.host_memory.join(", "))?;
                }
                writeln!(f)?;
            }
            if let Some(g) = self.gradients.get(entry.def.name.as_str()) {
                let what = match g.functions {
                    Some(_) => "gradient",
                    None => "not differentiable",
                };
                writeln!(f, "    {what}  ({})", g.location())?;
            }
        }
        if !self.conflicts.is_empty() {
            writeln!(f, "{} conflict(s):", self.conflicts.len())?;
            for c in &self.conflicts {
                writeln!(f, "  {c}")?;
            }
        }
        if !self.unlinked.is_empty() {
            writeln!(f, "{}", self.describe_unlinked())?;
        }
        Ok(())
    }
}
