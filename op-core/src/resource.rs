//! Resources: state shared between kernels and calls, such as variables and
//! lookup tables (TensorFlow's `ResourceBase`, `ResourceMgr` and
//! `ContainerInfo`).
//!
//! A resource is any `Send + Sync` type implementing [`Resource`]; it guards
//! its own state (a `Mutex`, an `RwLock`, atomics). It is reached in one of
//! two ways:
//!
//! - **by handle**: [`ResourceHandle::owning`] makes a handle that owns the
//!   resource; the resource is dropped exactly when the last owning handle
//!   is. [`ResourceMgr::resource`] resolves any handle, checking its type.
//! - **by name**: a [`ResourceMgr`] keeps resources in named containers, for
//!   sharing between nodes: [`create`](ResourceMgr::create),
//!   [`lookup`](ResourceMgr::lookup), [`lookup_or_create`](ResourceMgr::lookup_or_create)
//!   (atomic: racing threads create one resource), [`delete`](ResourceMgr::delete),
//!   [`cleanup`](ResourceMgr::cleanup) of a container, [`clear`](ResourceMgr::clear),
//!   and unowned entries that vanish with their resource
//!   ([`create_unowned`](ResourceMgr::create_unowned)).
//!   [`ContainerInfo`] applies TensorFlow's container / `shared_name` /
//!   node-name rules.
//!
//! Two kinds of resource have an interface of their own, as in
//! TensorFlow, so that ops and code written against it work with any
//! implementation: lookup tables ([`lookup::LookupInterface`], which
//! op-kernels' `SimpleHashTable` implements) and queues
//! ([`queue::QueueInterface`], reached through the [`queue::Queue`]
//! resource; op-kernels' `FifoQueue` implements it).
//!
//! ```
//! use std::sync::{Arc, Mutex};
//! use op_core::resource::{Resource, ResourceMgr};
//!
//! #[derive(Debug, Default)]
//! struct Counter(Mutex<i64>);
//! impl Resource for Counter {
//!     fn debug_string(&self) -> String {
//!         format!("Counter({})", self.0.lock().unwrap())
//!     }
//! }
//!
//! let mgr = ResourceMgr::new();
//! let a = mgr.lookup_or_create("", "steps", || Ok(Counter::default()))?;
//! *a.0.lock().unwrap() += 1;
//! let b = mgr.lookup::<Counter>("", "steps")?;
//! assert_eq!(*b.0.lock().unwrap(), 1);
//! assert_eq!(mgr.lookup::<Counter>("", "nope").unwrap_err().code(), op_core::Code::NotFound);
//! # Ok::<(), op_core::Error>(())
//! ```

pub mod lookup;
pub mod queue;

use std::any::{Any, TypeId};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};

use crate::error::{capped, quoted};
use crate::resource_handle::ResourceHandle;
use crate::{Error, Result};

/// A resource: state that outlives a kernel call, shared by kernels.
///
/// Implementors are `Send + Sync` and guard their own state.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a resource",
    label = "a resource parameter or result must be a type that implements `op_core::resource::Resource`",
    note = "implement `op_core::resource::Resource` for it: a short `debug_string` and, optionally, `memory_used`"
)]
pub trait Resource: Any + Send + Sync {
    /// A short description for messages and listings; keep it short even
    /// for big resources (a size, not the contents).
    fn debug_string(&self) -> String;

    /// The memory the resource holds, in bytes, if it knows.
    fn memory_used(&self) -> usize {
        0
    }

    /// The resource's state as a [`Saveable`](crate::checkpoint::Saveable),
    /// if it can be saved: what a saved model writes for it and restores
    /// into the resource a fresh session creates for the same node
    /// (TensorFlow's `TrackableResource` with `_serialize_to_tensors`).
    /// `None`, the default, leaves the resource out of saved models.
    ///
    /// ```
    /// use std::sync::Mutex;
    /// use op_core::checkpoint::{self, Saveable};
    /// use op_core::resource::Resource;
    /// use op_core::{Result, Tensor};
    ///
    /// struct Counter(Mutex<i64>);
    /// impl Resource for Counter {
    ///     fn debug_string(&self) -> String {
    ///         format!("Counter({})", self.0.lock().unwrap())
    ///     }
    ///     fn saveable(&self) -> Option<&dyn Saveable> {
    ///         Some(self)
    ///     }
    /// }
    /// impl Saveable for Counter {
    ///     fn serialize_to_tensors(&self) -> Result<Vec<(String, Tensor)>> {
    ///         Ok(vec![("count".into(), Tensor::scalar(*self.0.lock().unwrap()))])
    ///     }
    ///     fn restore_from_tensors(&self, tensors: Vec<(String, Tensor)>) -> Result<()> {
    ///         let [count] = checkpoint::take_tensors(tensors, ["count"], "Counter", "counter")?;
    ///         *self.0.lock().unwrap() = count.scalar_value()?;
    ///         Ok(())
    ///     }
    /// }
    /// let counter = Counter(Mutex::new(3));
    /// assert_eq!(counter.saveable().unwrap().serialize_to_tensors()?[0].0, "count");
    /// # Ok::<(), op_core::Error>(())
    /// ```
    #[cfg(feature = "checkpoint")]
    fn saveable(&self) -> Option<&dyn crate::checkpoint::Saveable> {
        None
    }

    /// The resource as a lookup table, if it is one: what TensorFlow's
    /// generic table ops (`LookupTableFindV2`, `LookupTableInsertV2`, ...)
    /// reach through a handle, whatever the table's type. A table returns
    /// `Some(self)`; the default is `None`.
    fn as_lookup(&self) -> Option<&dyn lookup::LookupInterface> {
        None
    }
}

/// The default container of a [`ResourceMgr`] (TensorFlow's).
pub const DEFAULT_CONTAINER: &str = "localhost";

enum Entry {
    Owned(Arc<dyn Resource>),
    Unowned(Weak<dyn Resource>),
}

impl Entry {
    fn get(&self) -> Option<Arc<dyn Resource>> {
        match self {
            Entry::Owned(r) => Some(r.clone()),
            Entry::Unowned(w) => w.upgrade(),
        }
    }

    /// Whether the resource lives, without taking a reference: an upgraded
    /// `Weak` dropped under the manager's lock could be the last reference,
    /// and drop the resource there.
    fn is_live(&self) -> bool {
        match self {
            Entry::Owned(_) => true,
            Entry::Unowned(w) => w.strong_count() > 0,
        }
    }
}

/// One entry per (type, name), as in TensorFlow: one name may hold
/// resources of different types.
type Container = HashMap<(TypeId, String), (&'static str, Entry)>;

/// Resources by container and name (TensorFlow's `ResourceMgr`).
pub struct ResourceMgr {
    default_container: String,
    containers: Mutex<BTreeMap<String, Container>>,
}

impl Default for ResourceMgr {
    fn default() -> Self {
        ResourceMgr::new()
    }
}

impl std::fmt::Debug for ResourceMgr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.debug_string())
    }
}

/// The resource as a `T`, if it is one (no reference count is taken: the
/// `Arc` is converted, not cloned).
fn downcast<T: Resource>(resource: Arc<dyn Resource>) -> Option<Arc<T>> {
    let any: Arc<dyn Any + Send + Sync> = resource;
    any.downcast::<T>().ok()
}

impl ResourceMgr {
    /// A manager whose default container is `localhost`.
    pub fn new() -> Self {
        ResourceMgr::with_default_container(DEFAULT_CONTAINER)
    }

    /// A manager with another default container.
    pub fn with_default_container(name: impl Into<String>) -> Self {
        ResourceMgr {
            default_container: name.into(),
            containers: Mutex::new(BTreeMap::new()),
        }
    }

    /// The container that `""` stands for.
    pub fn default_container(&self) -> &str {
        &self.default_container
    }

    fn container_name<'c>(&'c self, container: &'c str) -> &'c str {
        if container.is_empty() {
            &self.default_container
        } else {
            container
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Container>> {
        // Resources guard their own state; our map stays consistent even if
        // a thread panicked while holding the lock.
        self.containers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn insert<T: Resource>(&self, container: &str, name: &str, entry: Entry) -> Result<()> {
        let container = self.container_name(container).to_owned();
        let mut containers = self.lock();
        let slot = containers.entry(container.clone()).or_default();
        let key = (TypeId::of::<T>(), name.to_owned());
        if slot.get(&key).is_some_and(|(_, e)| e.is_live()) {
            return Err(Error::already_exists(format!(
                "resource {} of type {} already exists in container {}",
                quoted(name),
                std::any::type_name::<T>(),
                quoted(&container)
            )));
        }
        slot.insert(key, (std::any::type_name::<T>(), entry));
        Ok(())
    }

    /// Adds `resource` as `container`/`name` (`""` is the default
    /// container). `AlreadyExists` if a live resource of type `T` has that
    /// name.
    pub fn create<T: Resource>(
        &self,
        container: &str,
        name: &str,
        resource: impl Into<Arc<T>>,
    ) -> Result<()> {
        let resource: Arc<T> = resource.into();
        self.insert::<T>(container, name, Entry::Owned(resource))
    }

    /// Adds `resource` without owning it: the entry vanishes when the
    /// resource's last owner drops it (TensorFlow's `CreateUnowned`).
    pub fn create_unowned<T: Resource>(
        &self,
        container: &str,
        name: &str,
        resource: &Arc<T>,
    ) -> Result<()> {
        let resource: Arc<dyn Resource> = resource.clone();
        self.insert::<T>(container, name, Entry::Unowned(Arc::downgrade(&resource)))
    }

    /// The resource `container`/`name` of type `T`. `NotFound` if there is
    /// none (the message mentions a same-named resource of another type).
    pub fn lookup<T: Resource>(&self, container: &str, name: &str) -> Result<Arc<T>> {
        let container = self.container_name(container);
        let containers = self.lock();
        let found = containers
            .get(container)
            .and_then(|c| c.get(&(TypeId::of::<T>(), name.to_owned())))
            .and_then(|(_, e)| e.get());
        if let Some(resource) = found {
            return downcast::<T>(resource)
                .ok_or_else(|| Error::internal("a resource is stored under the wrong type"));
        }
        let other = containers.get(container).and_then(|c| {
            c.iter()
                .find(|((_, n), (_, e))| n == name && e.is_live())
                .map(|(_, (type_name, _))| *type_name)
        });
        let hint = other
            .map(|t| {
                format!(
                    " (container {} has a resource {} of type {t})",
                    quoted(container),
                    quoted(name)
                )
            })
            .unwrap_or_default();
        Err(Error::not_found(format!(
            "resource {} of type {} does not exist in container {}{hint}",
            quoted(name),
            std::any::type_name::<T>(),
            quoted(container)
        )))
    }

    /// The resource `container`/`name` of type `T`, created with `create`
    /// if there is none. Atomic: threads racing here create one resource
    /// (`create` runs under the manager's lock, so it must not use the
    /// manager itself).
    pub fn lookup_or_create<T: Resource>(
        &self,
        container: &str,
        name: &str,
        create: impl FnOnce() -> Result<T>,
    ) -> Result<Arc<T>> {
        let container = self.container_name(container).to_owned();
        let mut containers = self.lock();
        let slot = containers.entry(container).or_default();
        let key = (TypeId::of::<T>(), name.to_owned());
        if let Some(resource) = slot.get(&key).and_then(|(_, e)| e.get()) {
            return downcast::<T>(resource)
                .ok_or_else(|| Error::internal("a resource is stored under the wrong type"));
        }
        let resource = Arc::new(create()?);
        slot.insert(
            key,
            (std::any::type_name::<T>(), Entry::Owned(resource.clone())),
        );
        Ok(resource)
    }

    /// Removes resource `container`/`name` of type `T`; the resource itself
    /// lives on while someone holds it. `NotFound` if there is none.
    pub fn delete<T: Resource>(&self, container: &str, name: &str) -> Result<()> {
        self.delete_by_id(
            container,
            name,
            TypeId::of::<T>(),
            std::any::type_name::<T>(),
        )
    }

    fn delete_by_id(
        &self,
        container: &str,
        name: &str,
        type_id: TypeId,
        type_name: &str,
    ) -> Result<()> {
        let container = self.container_name(container);
        let mut containers = self.lock();
        let removed = containers
            .get_mut(container)
            .and_then(|c| c.remove(&(type_id, name.to_owned())))
            .and_then(|(_, e)| e.get());
        // Release the lock before the resource may be dropped: its `Drop`
        // may use the manager (TensorFlow, too, unrefs outside the lock).
        drop(containers);
        match removed {
            Some(_) => Ok(()),
            None => Err(Error::not_found(format!(
                "resource {} of type {} does not exist in container {}",
                quoted(name),
                capped(type_name),
                quoted(container)
            ))),
        }
    }

    /// Removes the resource `handle` names. `InvalidArgument` for a handle
    /// that does not know its resource's type.
    pub fn delete_handle(&self, handle: &ResourceHandle) -> Result<()> {
        let type_id = handle.type_id.ok_or_else(|| {
            Error::invalid_argument(format!(
                "resource handle {} does not know its resource's type, so it cannot delete it",
                quoted(&handle.name)
            ))
        })?;
        self.delete_by_id(&handle.container, &handle.name, type_id, &handle.type_name)
    }

    /// The resource `handle` refers to, as a `T`: the one it owns, or the one
    /// of its container and name here. A handle of another type is an
    /// `InvalidArgument` error; a resource that was deleted is `NotFound`.
    pub fn resource<T: Resource>(&self, handle: &ResourceHandle) -> Result<Arc<T>> {
        if handle.is_type::<T>() == Some(false) {
            return Err(Error::invalid_argument(format!(
                "resource handle {} refers to a {}, not a {}",
                quoted(&handle.name),
                capped(&handle.type_name),
                std::any::type_name::<T>()
            )));
        }
        match &handle.owner {
            Some(owner) => downcast::<T>(owner.clone()).ok_or_else(|| {
                Error::invalid_argument(format!(
                    "resource handle {} refers to a {}, not a {}",
                    quoted(&handle.name),
                    capped(&handle.type_name),
                    std::any::type_name::<T>()
                ))
            }),
            None => self.lookup::<T>(&handle.container, &handle.name),
        }
    }

    /// The resource `handle` refers to, whatever its type: the one it
    /// owns, or the one of its container and name here (of the handle's
    /// type, when it knows it). `NotFound` if there is none.
    pub fn resource_dyn(&self, handle: &ResourceHandle) -> Result<Arc<dyn Resource>> {
        if let Some(owner) = &handle.owner {
            return Ok(owner.clone());
        }
        let containers = self
            .containers
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        containers
            .get(&handle.container)
            .and_then(|container| {
                container
                    .iter()
                    .filter(|((type_id, name), _)| {
                        *name == handle.name && handle.type_id.is_none_or(|t| t == *type_id)
                    })
                    .find_map(|(_, (_, entry))| entry.get())
            })
            .ok_or_else(|| {
                Error::not_found(format!(
                    "resource {} of container {} does not exist",
                    quoted(&handle.name),
                    quoted(&handle.container)
                ))
            })
    }

    /// Whether `handle`'s resource exists: always for an owning handle (it
    /// keeps its resource alive); for a named one, whether this manager has
    /// a live resource of the handle's container, name and type (any type,
    /// for a handle that does not know its type). TensorFlow's
    /// `IsResourceInitialized`.
    pub fn is_initialized(&self, handle: &ResourceHandle) -> bool {
        if handle.owner.is_some() {
            return true;
        }
        let container = self.container_name(&handle.container);
        let containers = self.lock();
        let Some(entries) = containers.get(container) else {
            return false;
        };
        match handle.type_id {
            Some(type_id) => entries
                .get(&(type_id, handle.name.clone()))
                .is_some_and(|(_, e)| e.is_live()),
            None => entries
                .iter()
                .any(|((_, name), (_, e))| *name == handle.name && e.is_live()),
        }
    }

    /// Removes every resource of `container` and the container itself
    /// (nothing to do if it does not exist).
    pub fn cleanup(&self, container: &str) {
        let container = self.container_name(container).to_owned();
        // Drop the resources after releasing the lock (see `delete_by_id`).
        let removed = self.lock().remove(&container);
        drop(removed);
    }

    /// Removes every resource of every container.
    pub fn clear(&self) {
        // Drop the resources after releasing the lock (see `delete_by_id`).
        let removed = std::mem::take(&mut *self.lock());
        drop(removed);
    }

    /// Every live resource: `container/name (type): debug string`, sorted.
    pub fn debug_string(&self) -> String {
        // Upgraded resources are dropped after the lock is released (see
        // `delete_by_id`): `live` is declared before the guard.
        let mut live = Vec::new();
        let containers = self.lock();
        let mut lines = Vec::new();
        for (container, entries) in containers.iter() {
            for ((_, name), (type_name, entry)) in entries {
                if let Some(resource) = entry.get() {
                    lines.push(format!(
                        "{container}/{name} ({type_name}): {}",
                        resource.debug_string()
                    ));
                    live.push(resource);
                }
            }
        }
        lines.sort();
        lines.join("\n")
    }
}

/// Where a stateful node's resource lives: TensorFlow's `ContainerInfo`,
/// from the node's `container` and `shared_name` attrs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContainerInfo {
    container: String,
    name: String,
    private_to_kernel: bool,
}

static NEXT_PRIVATE: AtomicU64 = AtomicU64::new(0);

fn is_valid_container_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric() || c == '.')
        && chars.all(|c| c.is_ascii_alphanumeric() || "_.-/".contains(c))
}

impl ContainerInfo {
    /// The rules of TensorFlow's `ContainerInfo::Init`:
    ///
    /// - the container is `container`, or the manager's default if empty;
    ///   it must match `[A-Za-z0-9.][A-Za-z0-9_.\-/]*`;
    /// - the name is `shared_name` (which must not start with `_`, kept for
    ///   generated names); if empty, the node's name when
    ///   `use_node_name_as_default`, else a unique `_<n>_<node name>`, and
    ///   the resource is then private to the kernel.
    pub fn new(
        mgr: &ResourceMgr,
        container: &str,
        shared_name: &str,
        node_name: &str,
        use_node_name_as_default: bool,
    ) -> Result<Self> {
        if !container.is_empty() && !is_valid_container_name(container) {
            return Err(Error::invalid_argument(format!(
                "container {} contains invalid characters: use letters, digits and _.-/ (not first: _-/)",
                quoted(container)
            )));
        }
        if shared_name.starts_with('_') {
            return Err(Error::invalid_argument(format!(
                "shared_name {} cannot start with '_', which is kept for generated names",
                quoted(shared_name)
            )));
        }
        let container = if container.is_empty() {
            mgr.default_container().to_owned()
        } else {
            container.to_owned()
        };
        let (name, private_to_kernel) = if !shared_name.is_empty() {
            (shared_name.to_owned(), false)
        } else if use_node_name_as_default {
            (node_name.to_owned(), false)
        } else {
            let n = NEXT_PRIVATE.fetch_add(1, Ordering::Relaxed);
            (format!("_{n}_{node_name}"), true)
        };
        Ok(ContainerInfo {
            container,
            name,
            private_to_kernel,
        })
    }

    /// The container.
    pub fn container(&self) -> &str {
        &self.container
    }

    /// The resource's name in the container.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether the name was generated, so no other node shares the resource.
    pub fn resource_is_private_to_kernel(&self) -> bool {
        self.private_to_kernel
    }
}

/// The state of a kernel that looks up or creates its resource on first
/// use and outputs a handle to it: TensorFlow's `ResourceOpKernel<T>`,
/// for ops such as `HashTableV2` with `container` and `shared_name` attrs.
///
/// Where the resource lives follows [`ContainerInfo`]:
///
/// - **shared** (a `shared_name`, or the node's name when
///   `use_node_name_as_default`): in the device's [`ResourceMgr`], looked
///   up or created atomically on every call, so every node naming it, and a
///   `DestroyResourceOp`, sees the same one; the handle names it. Every
///   eager call with that name gets that one resource too.
/// - **private** (neither), in a graph: one resource per node, made on the
///   node's first run and kept by its kernel for every later run; the
///   kernel outputs an *owning* handle, and the resource goes when the
///   kernel and the last handle have gone. (TensorFlow registers it in the
///   manager under a generated name and deletes it when the kernel goes;
///   nothing is left behind here either way.)
/// - **private**, in an eager call ([`KernelConstruction::is_eager`](crate::KernelConstruction::is_eager)):
///   a fresh resource on every call, owned by the handle it outputs alone.
///   The runtime shares one kernel among all eager calls of a like node,
///   on every thread, so a resource kept by the kernel would be one for
///   them all; TensorFlow's Python layer avoids the same trap by giving
///   each eager creation (`tf.queue.FIFOQueue(...)`, a `StaticHashTable`)
///   a unique shared name.
///
/// ```
/// use std::sync::Mutex;
/// use op_core::resource::{Resource, ResourceOpState};
/// use op_core::{KernelConstruction, KernelContext, OpKernel, Result};
///
/// struct Log(Mutex<Vec<String>>);
/// impl Resource for Log {
///     fn debug_string(&self) -> String {
///         "Log".into()
///     }
/// }
///
/// /// `Log(container: string = "", shared_name: string = "") -> handle: resource`
/// struct LogOp(ResourceOpState<Log>);
///
/// impl LogOp {
///     fn new(c: &KernelConstruction<'_>) -> Result<Self> {
///         Ok(LogOp(ResourceOpState::new(c, false)?))
///     }
/// }
///
/// impl OpKernel for LogOp {
///     fn compute(&self, ctx: &mut KernelContext<'_>) -> Result<()> {
///         self.0.set_handle_output(ctx, 0, || Ok(Log(Mutex::new(Vec::new()))))
///     }
/// }
/// ```
pub struct ResourceOpState<T> {
    info: ContainerInfo,
    /// Whether a private resource is made afresh on every call (an eager
    /// kernel's) rather than once for the node.
    fresh_per_call: bool,
    /// The resource of a private graph node's kernel, once made.
    private: Mutex<Option<Arc<T>>>,
}

impl<T: Resource> ResourceOpState<T> {
    /// Reads the node's `container` and `shared_name` string attrs (empty
    /// when the op has none) and applies [`ContainerInfo::new`]'s rules.
    pub fn new(
        construction: &crate::KernelConstruction<'_>,
        use_node_name_as_default: bool,
    ) -> Result<Self> {
        let attr = |name: &str| -> Result<String> {
            match construction.instance().attr(name) {
                Some(_) => construction.get_attr::<String>(name),
                None => Ok(String::new()),
            }
        };
        let info = ContainerInfo::new(
            construction.resource_manager(),
            &attr("container")?,
            &attr("shared_name")?,
            construction.node_name(),
            use_node_name_as_default,
        )?;
        Ok(ResourceOpState {
            fresh_per_call: construction.is_eager() && info.resource_is_private_to_kernel(),
            info,
            private: Mutex::new(None),
        })
    }

    /// Where the resource lives.
    pub fn container_info(&self) -> &ContainerInfo {
        &self.info
    }

    /// The resource, made with `create` on first use, or on every call of
    /// an eager kernel with no shared name (see the type's docs for where
    /// it lives). `create` runs at most once per resource, under a lock:
    /// it must not use the resource manager.
    pub fn get_or_create(
        &self,
        ctx: &crate::KernelContext<'_>,
        create: impl FnOnce() -> Result<T>,
    ) -> Result<Arc<T>> {
        if !self.info.resource_is_private_to_kernel() {
            return ctx.resource_manager().lookup_or_create(
                self.info.container(),
                self.info.name(),
                create,
            );
        }
        if self.fresh_per_call {
            return Ok(Arc::new(create()?));
        }
        let mut private = self.private.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(resource) = &*private {
            return Ok(resource.clone());
        }
        let resource = Arc::new(create()?);
        *private = Some(resource.clone());
        Ok(resource)
    }

    /// A handle to `resource`, got from [`get_or_create`](Self::get_or_create):
    /// named for a shared one, owning for a private one.
    pub fn handle(&self, ctx: &crate::KernelContext<'_>, resource: Arc<T>) -> ResourceHandle {
        if self.info.resource_is_private_to_kernel() {
            ResourceHandle::owning(ctx.resource_device(), resource)
        } else {
            ResourceHandle::named::<T>(
                ctx.resource_device(),
                self.info.container(),
                self.info.name(),
            )
        }
    }

    /// Gets or creates the resource and sets output `index` (a `resource`
    /// output) to its handle: the whole `Compute` of a resource op kernel.
    pub fn set_handle_output(
        &self,
        ctx: &mut crate::KernelContext<'_>,
        index: usize,
        create: impl FnOnce() -> Result<T>,
    ) -> Result<()> {
        let resource = self.get_or_create(ctx, create)?;
        let handle = self.handle(ctx, resource);
        ctx.set_output(index, crate::Tensor::scalar(handle))
    }
}
