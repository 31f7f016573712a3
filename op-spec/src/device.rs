//! Devices: where kernels run and where tensors live.
//!
//! [`DeviceType`] is what a kernel is registered for (`#[kernel(device =
//! "gpu")]`, TensorFlow's `DEVICE_CPU`/`DEVICE_GPU`); [`Device`] is one
//! device of a type, with its index, named as TensorFlow names it. Both live
//! here, beside [`DType`](crate::DType), because the proc macros check
//! `device = "..."` against the same table the runtime uses.

use std::fmt;
use std::str::FromStr;

/// A kind of device: what a kernel is registered for.
///
/// `Display` and [`name`](Self::name) give the name used in registrations
/// and messages (`cpu`, `gpu`); [`tf_name`](Self::tf_name) gives
/// TensorFlow's (`CPU`, `GPU`). Parsing accepts either, in any case.
///
/// ```
/// use op_spec::DeviceType;
/// assert_eq!("gpu".parse::<DeviceType>().unwrap(), DeviceType::Gpu);
/// assert_eq!("CPU".parse::<DeviceType>().unwrap(), DeviceType::Cpu);
/// assert_eq!(DeviceType::Gpu.to_string(), "gpu");
/// assert_eq!(DeviceType::Gpu.tf_name(), "GPU");
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DeviceType {
    /// The host's processors.
    Cpu,
    /// A CUDA GPU.
    Gpu,
}

impl DeviceType {
    /// Every device type, in order.
    pub const ALL: [DeviceType; 2] = [DeviceType::Cpu, DeviceType::Gpu];

    /// The name used in registrations and messages: `cpu`, `gpu`.
    pub const fn name(self) -> &'static str {
        match self {
            DeviceType::Cpu => "cpu",
            DeviceType::Gpu => "gpu",
        }
    }

    /// TensorFlow's name: `CPU`, `GPU`.
    pub const fn tf_name(self) -> &'static str {
        match self {
            DeviceType::Cpu => "CPU",
            DeviceType::Gpu => "GPU",
        }
    }

    /// The Rust path of the variant, for generated code: `Cpu`, `Gpu`.
    pub const fn variant_name(self) -> &'static str {
        match self {
            DeviceType::Cpu => "Cpu",
            DeviceType::Gpu => "Gpu",
        }
    }

    /// The device type named `name` (`cpu`, `CPU`, `gpu`, `GPU`, any case).
    pub fn from_name(name: &str) -> Option<DeviceType> {
        DeviceType::ALL
            .into_iter()
            .find(|d| d.name().eq_ignore_ascii_case(name))
    }
}

impl fmt::Display for DeviceType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for DeviceType {
    type Err = UnknownDevice;

    fn from_str(s: &str) -> Result<DeviceType, UnknownDevice> {
        DeviceType::from_name(s).ok_or_else(|| UnknownDevice(s.to_owned()))
    }
}

/// One device: its type and index (`GPU:1` is the second GPU).
///
/// `Display` writes TensorFlow's full name,
/// `/job:localhost/replica:0/task:0/device:CPU:0`, the form TensorFlow puts
/// in resource handles and `tf.Tensor.device`. Parsing accepts that form and
/// the shorter ones TensorFlow accepts: `/device:GPU:1`, `/gpu:1`, `GPU:1`,
/// `cpu` (index 0).
///
/// ```
/// use op_spec::{Device, DeviceType};
/// let gpu = Device::new(DeviceType::Gpu, 1);
/// assert_eq!(gpu.to_string(), "/job:localhost/replica:0/task:0/device:GPU:1");
/// assert_eq!("/gpu:1".parse::<Device>().unwrap(), gpu);
/// assert_eq!("cpu".parse::<Device>().unwrap(), Device::CPU);
/// assert_eq!(Device::CPU.short_name(), "CPU:0");
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Device {
    kind: DeviceType,
    index: u32,
}

impl Device {
    /// The host CPU, `CPU:0`: the device of every runtime unless told
    /// otherwise.
    pub const CPU: Device = Device::new(DeviceType::Cpu, 0);

    /// Device number `index` of type `kind`.
    pub const fn new(kind: DeviceType, index: u32) -> Device {
        Device { kind, index }
    }

    /// GPU number `index`.
    pub const fn gpu(index: u32) -> Device {
        Device::new(DeviceType::Gpu, index)
    }

    /// The device's type.
    pub const fn kind(self) -> DeviceType {
        self.kind
    }

    /// The device's index among the devices of its type.
    pub const fn index(self) -> u32 {
        self.index
    }

    /// `CPU:0`, `GPU:1`: TensorFlow's short name.
    pub fn short_name(self) -> String {
        format!("{}:{}", self.kind.tf_name(), self.index)
    }
}

impl Default for Device {
    /// [`Device::CPU`].
    fn default() -> Device {
        Device::CPU
    }
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "/job:localhost/replica:0/task:0/device:{}:{}",
            self.kind.tf_name(),
            self.index
        )
    }
}

impl FromStr for Device {
    type Err = UnknownDevice;

    fn from_str(s: &str) -> Result<Device, UnknownDevice> {
        parse_device(s).ok_or_else(|| UnknownDevice(s.to_owned()))
    }
}

/// Parses the device forms listed on [`Device`].
fn parse_device(s: &str) -> Option<Device> {
    let mut rest = s;
    // `/job:localhost/replica:0/task:0` may precede the device part.
    for prefix in ["/job:localhost", "/replica:0", "/task:0"] {
        rest = rest.strip_prefix(prefix).unwrap_or(rest);
    }
    let rest = rest
        .strip_prefix("/device:")
        .or_else(|| rest.strip_prefix('/'))
        .unwrap_or(rest);
    let (kind, index) = match rest.split_once(':') {
        Some((kind, index)) => {
            // Only plain decimal digits: no sign, no spaces.
            if index.is_empty() || !index.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            (kind, index.parse().ok()?)
        }
        None => (rest, 0),
    };
    Some(Device::new(DeviceType::from_name(kind)?, index))
}

/// The error of parsing a [`Device`] or [`DeviceType`] from an unknown name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownDevice(pub String);

impl fmt::Display for UnknownDevice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown device '{}': expected a device type ({}) with an optional index, as in 'gpu:1' or '/job:localhost/replica:0/task:0/device:GPU:1'",
            self.0,
            DeviceType::ALL.map(DeviceType::name).join(", ")
        )
    }
}

impl std::error::Error for UnknownDevice {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_accepted_form_parses_and_the_full_name_round_trips() {
        let gpu1 = Device::gpu(1);
        for text in [
            "/job:localhost/replica:0/task:0/device:GPU:1",
            "/device:GPU:1",
            "/gpu:1",
            "GPU:1",
            "gpu:1",
        ] {
            assert_eq!(text.parse::<Device>(), Ok(gpu1), "{text}");
        }
        for text in ["cpu", "CPU", "/cpu:0", "/device:CPU:0"] {
            assert_eq!(text.parse::<Device>(), Ok(Device::CPU), "{text}");
        }
        for device in [Device::CPU, gpu1, Device::gpu(u32::MAX)] {
            assert_eq!(device.to_string().parse::<Device>(), Ok(device));
        }
    }

    #[test]
    fn malformed_names_are_errors() {
        for text in [
            "",
            "tpu",
            "gpu:",
            "gpu:-1",
            "gpu:+1",
            "gpu: 1",
            "gpu:1x",
            "gpu:99999999999",
            "/job:worker/device:GPU:0",
            "cpu:0:0",
        ] {
            let err = text.parse::<Device>().unwrap_err();
            assert!(
                err.to_string()
                    .starts_with(&format!("unknown device '{text}'"))
            );
        }
        assert!("tpu".parse::<DeviceType>().is_err());
    }
}
