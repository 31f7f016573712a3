//! [`ResourceHandle`]: the element type of `resource` tensors.

/// A handle to a resource, such as a variable or a lookup table: the element
/// type of tensors of dtype `resource` (`DT_RESOURCE`).
///
/// This is a plain value naming the resource, like TensorFlow's
/// `ResourceHandleProto`; it does not own or point to the resource. The
/// resource system (a later issue) extends it with what it needs to look
/// resources up.
///
/// ```
/// use op_core::ResourceHandle;
/// let handle = ResourceHandle::new("/cpu:0", "", "weights", "Var");
/// assert_eq!(handle.name, "weights");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ResourceHandle {
    /// The device that holds the resource (`/job:localhost/.../cpu:0`).
    pub device: String,
    /// The container of the resource in its device's resource manager.
    pub container: String,
    /// The name of the resource in its container.
    pub name: String,
    /// The name of the resource's Rust or C++ type, for checking lookups.
    pub type_name: String,
}

impl ResourceHandle {
    /// A handle with the given fields.
    pub fn new(
        device: impl Into<String>,
        container: impl Into<String>,
        name: impl Into<String>,
        type_name: impl Into<String>,
    ) -> ResourceHandle {
        ResourceHandle {
            device: device.into(),
            container: container.into(),
            name: name.into(),
            type_name: type_name.into(),
        }
    }
}
