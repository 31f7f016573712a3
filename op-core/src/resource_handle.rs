//! [`ResourceHandle`]: the element type of `resource` tensors.

use std::any::TypeId;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use crate::Device;
use crate::resource::Resource;

/// A handle to a resource, such as a variable or a lookup table: the element
/// type of tensors of dtype `resource` (`DT_RESOURCE`).
///
/// Like TensorFlow's `ResourceHandle`, it names the resource: the device,
/// the container and name in that device's resource manager, and the
/// resource's type. A handle made with [`ResourceHandle::owning`] also
/// *owns* the resource: the resource lives as long as some owning handle
/// does, and is dropped exactly when the last one goes (TensorFlow's
/// ref-counting handles). See [`crate::resource`].
///
/// ```
/// use op_core::{Device, ResourceHandle};
/// let handle = ResourceHandle::new(Device::CPU, "", "weights", "Var");
/// assert_eq!(handle.name, "weights");
/// assert_eq!(handle.device.to_string(), "/job:localhost/replica:0/task:0/device:CPU:0");
/// assert!(!handle.is_owning());
/// ```
#[derive(Clone, Default)]
pub struct ResourceHandle {
    /// The device that holds the resource (the runtime's device, for a
    /// handle a kernel made); kernels of other devices refuse the handle.
    /// It prints as TensorFlow's full device name,
    /// `/job:localhost/replica:0/task:0/device:CPU:0`, the value of
    /// TensorFlow's `ResourceHandleProto.device` and of a handle's
    /// `.device` in Python.
    pub device: Device,
    /// The container of the resource in its device's resource manager.
    pub container: String,
    /// The name of the resource in its container.
    pub name: String,
    /// The name of the resource's Rust type, for messages.
    pub type_name: String,
    /// The resource's Rust type, when the handle was made from a typed
    /// resource (handles built from names only have none).
    pub(crate) type_id: Option<TypeId>,
    /// The resource itself, for an owning handle.
    pub(crate) owner: Option<Arc<dyn Resource>>,
}

impl ResourceHandle {
    /// A handle naming a resource, without owning it or knowing its type.
    pub fn new(
        device: Device,
        container: impl Into<String>,
        name: impl Into<String>,
        type_name: impl Into<String>,
    ) -> ResourceHandle {
        ResourceHandle {
            device,
            container: container.into(),
            name: name.into(),
            type_name: type_name.into(),
            type_id: None,
            owner: None,
        }
    }

    /// A handle naming resource `container`/`name` of type `T` in a
    /// resource manager, without owning it.
    pub fn named<T: Resource>(
        device: Device,
        container: impl Into<String>,
        name: impl Into<String>,
    ) -> ResourceHandle {
        ResourceHandle {
            device,
            container: container.into(),
            name: name.into(),
            type_name: std::any::type_name::<T>().to_owned(),
            type_id: Some(TypeId::of::<T>()),
            owner: None,
        }
    }

    /// A handle that owns `resource`: it and its clones keep the resource
    /// alive; the resource is dropped when the last owning handle is. The
    /// name is unique (`_anonymous_<n>`); the resource is in no manager.
    pub fn owning<T: Resource>(device: Device, resource: Arc<T>) -> ResourceHandle {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        ResourceHandle {
            device,
            container: String::new(),
            name: format!("_anonymous_{n}"),
            type_name: std::any::type_name::<T>().to_owned(),
            type_id: Some(TypeId::of::<T>()),
            owner: Some(resource),
        }
    }

    /// Whether this handle owns its resource.
    pub fn is_owning(&self) -> bool {
        self.owner.is_some()
    }

    /// Whether this handle's resource is of type `T`, when the handle knows
    /// its type.
    pub fn is_type<T: Resource>(&self) -> Option<bool> {
        self.type_id.map(|id| id == TypeId::of::<T>())
    }
}

impl fmt::Debug for ResourceHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("ResourceHandle");
        d.field("device", &format_args!("{}", self.device))
            .field("container", &self.container)
            .field("name", &self.name)
            .field("type_name", &self.type_name);
        if let Some(owner) = &self.owner {
            d.field("owns", &owner.debug_string());
        }
        d.finish()
    }
}

impl PartialEq for ResourceHandle {
    /// Handles are equal when they name the same resource (device,
    /// container, name, type) and, for owning handles, own the same one.
    fn eq(&self, other: &Self) -> bool {
        self.device == other.device
            && self.container == other.container
            && self.name == other.name
            && self.type_name == other.type_name
            && match (&self.owner, &other.owner) {
                (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                (None, None) => true,
                _ => false,
            }
    }
}

impl Eq for ResourceHandle {}

impl Hash for ResourceHandle {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (&self.device, &self.container, &self.name, &self.type_name).hash(state);
    }
}
