//! Tests of resources: ref-counted owning [`ResourceHandle`]s (also inside
//! `resource` tensors), type-checked access through handles, the
//! [`ResourceMgr`] (create, lookup, atomic `lookup_or_create`, delete,
//! cleanup, clear, unowned entries) and [`ContainerInfo`]'s rules.
//!
//! Drops are observed with a resource type whose `Drop` increments a
//! `static AtomicUsize`; every test that counts drops has its own counter,
//! so tests running in parallel do not disturb each other.

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex, Weak, mpsc};
use std::thread;
use std::time::Duration;

use op_core::resource::{ContainerInfo, DEFAULT_CONTAINER, Resource, ResourceMgr};
use op_core::{Code, DType, ResourceHandle, Tensor};

/// A resource that counts its drops in a static counter.
#[derive(Debug)]
struct Tracked {
    label: &'static str,
    drops: &'static AtomicUsize,
}

impl Tracked {
    fn new(label: &'static str, drops: &'static AtomicUsize) -> Tracked {
        Tracked { label, drops }
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
    }
}

impl Resource for Tracked {
    fn debug_string(&self) -> String {
        format!("Tracked({})", self.label)
    }
}

/// A mutable resource.
#[derive(Debug, Default)]
struct Counter(Mutex<i64>);

impl Counter {
    fn with(n: i64) -> Counter {
        Counter(Mutex::new(n))
    }
    fn get(&self) -> i64 {
        *self.0.lock().unwrap()
    }
}

impl Resource for Counter {
    fn debug_string(&self) -> String {
        format!("Counter({})", self.get())
    }
}

/// Another resource type, to mix types under one name.
#[derive(Debug, Default)]
struct Table(Mutex<Vec<String>>);

impl Resource for Table {
    fn debug_string(&self) -> String {
        format!("Table of {}", self.0.lock().unwrap().len())
    }
    fn memory_used(&self) -> usize {
        7
    }
}

fn drops(counter: &AtomicUsize) -> usize {
    counter.load(Ordering::SeqCst)
}

/// Runs `f` on another thread and fails if it does not finish in time (a
/// deadlock), instead of hanging the test run.
fn within_seconds<R: Send + 'static>(secs: u64, f: impl FnOnce() -> R + Send + 'static) -> R {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(secs))
        .expect("did not finish in time: deadlock?")
}

// ---------------------------------------------------------------------------
// Owning handles keep their resource alive.
// ---------------------------------------------------------------------------

#[test]
fn owning_handle_keeps_resource_alive_and_drops_it_once() {
    static DROPS: AtomicUsize = AtomicUsize::new(0);
    let handle = ResourceHandle::owning(op_core::Device::CPU, Arc::new(Tracked::new("a", &DROPS)));
    assert!(handle.is_owning());
    assert_eq!(handle.device, op_core::Device::CPU);
    assert_eq!(handle.container, "");
    assert!(handle.name.starts_with("_anonymous_"), "{}", handle.name);
    assert_eq!(handle.type_name, std::any::type_name::<Tracked>());
    assert_eq!(handle.is_type::<Tracked>(), Some(true));
    assert_eq!(handle.is_type::<Counter>(), Some(false));
    assert_eq!(drops(&DROPS), 0);

    let clone = handle.clone();
    drop(handle);
    assert_eq!(drops(&DROPS), 0, "a clone still owns the resource");
    drop(clone);
    assert_eq!(
        drops(&DROPS),
        1,
        "the last owning handle drops the resource"
    );
}

#[test]
fn owning_handle_shares_the_arc_it_was_given() {
    static DROPS: AtomicUsize = AtomicUsize::new(0);
    let resource = Arc::new(Tracked::new("shared", &DROPS));
    let handle = ResourceHandle::owning(op_core::Device::CPU, resource.clone());
    let mgr = ResourceMgr::new();
    let got = mgr.resource::<Tracked>(&handle).unwrap();
    assert!(Arc::ptr_eq(&got, &resource));
    drop(handle);
    drop(got);
    assert_eq!(drops(&DROPS), 0, "the caller's Arc keeps it alive");
    drop(resource);
    assert_eq!(drops(&DROPS), 1);
}

#[test]
fn resource_tensors_and_their_clones_keep_the_resource_alive() {
    static DROPS: AtomicUsize = AtomicUsize::new(0);
    let handle = ResourceHandle::owning(op_core::Device::CPU, Arc::new(Tracked::new("t", &DROPS)));
    let tensor = Tensor::from_vec([2], vec![handle.clone(), handle.clone()]).unwrap();
    assert_eq!(tensor.dtype(), DType::Resource);
    assert_eq!(tensor.dims(), &[2]);
    let elements = tensor.as_slice::<ResourceHandle>().unwrap();
    assert_eq!(elements[0], handle);
    assert_eq!(elements[1], handle);
    assert!(elements[0].is_owning());

    let tensor_clone = tensor.clone();
    let scalar = Tensor::scalar(handle.clone());
    assert_eq!(scalar.dtype(), DType::Resource);

    drop(handle);
    assert_eq!(drops(&DROPS), 0);
    drop(tensor);
    assert_eq!(drops(&DROPS), 0, "the tensor clone still owns it");
    drop(scalar);
    assert_eq!(drops(&DROPS), 0, "the tensor clone still owns it");

    // Resolving through an element of the surviving tensor works.
    let mgr = ResourceMgr::new();
    let element = tensor_clone.as_slice::<ResourceHandle>().unwrap()[1].clone();
    assert_eq!(mgr.resource::<Tracked>(&element).unwrap().label, "t");
    drop(element);
    assert_eq!(drops(&DROPS), 0);

    drop(tensor_clone);
    assert_eq!(
        drops(&DROPS),
        1,
        "dropped exactly once, with the last tensor"
    );
}

#[test]
fn owning_handles_moved_across_threads_drop_once() {
    static DROPS: AtomicUsize = AtomicUsize::new(0);
    let handle = ResourceHandle::owning(op_core::Device::CPU, Arc::new(Tracked::new("mt", &DROPS)));
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let h = handle.clone();
            thread::spawn(move || {
                let t = Tensor::from_vec([3], vec![h.clone(), h.clone(), h]).unwrap();
                let mgr = ResourceMgr::new();
                let r = mgr
                    .resource::<Tracked>(&t.as_slice::<ResourceHandle>().unwrap()[0])
                    .unwrap();
                assert_eq!(r.label, "mt");
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(drops(&DROPS), 0);
    drop(handle);
    assert_eq!(drops(&DROPS), 1);
}

// ---------------------------------------------------------------------------
// Getting a resource through a handle.
// ---------------------------------------------------------------------------

#[test]
fn resource_through_handle_of_the_right_type_is_the_same_arc() {
    let mgr = ResourceMgr::new();
    let counter = Arc::new(Counter::with(3));
    let handle = ResourceHandle::owning(op_core::Device::CPU, counter.clone());
    let a = mgr.resource::<Counter>(&handle).unwrap();
    let b = mgr.resource::<Counter>(&handle.clone()).unwrap();
    assert!(Arc::ptr_eq(&a, &counter));
    assert!(Arc::ptr_eq(&b, &counter));
    *a.0.lock().unwrap() += 1;
    assert_eq!(counter.get(), 4);
    // An owning handle is resolved without the manager: another manager
    // does just as well, and the manager holds nothing.
    let other = ResourceMgr::with_default_container("elsewhere");
    assert!(Arc::ptr_eq(
        &other.resource::<Counter>(&handle).unwrap(),
        &counter
    ));
    assert_eq!(mgr.debug_string(), "");
}

#[test]
fn resource_through_handle_of_the_wrong_type_is_invalid_argument() {
    let mgr = ResourceMgr::new();
    let handle = ResourceHandle::owning(op_core::Device::CPU, Arc::new(Counter::with(1)));
    let err = mgr.resource::<Table>(&handle).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    let msg = err.message();
    assert!(msg.contains(std::any::type_name::<Counter>()), "{msg}");
    assert!(msg.contains(std::any::type_name::<Table>()), "{msg}");
    assert!(msg.contains(&handle.name), "{msg}");
    // The handle still works with the right type afterwards.
    assert_eq!(mgr.resource::<Counter>(&handle).unwrap().get(), 1);
}

#[test]
fn named_handle_of_the_wrong_type_is_invalid_argument_even_if_the_name_exists() {
    let mgr = ResourceMgr::new();
    mgr.create("", "v", Counter::with(1)).unwrap();
    mgr.create("", "v", Table::default()).unwrap();
    let handle = ResourceHandle::named::<Counter>(op_core::Device::CPU, "", "v");
    let err = mgr.resource::<Table>(&handle).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(
        err.message().contains(std::any::type_name::<Counter>()),
        "{}",
        err.message()
    );
    assert!(
        err.message().contains(std::any::type_name::<Table>()),
        "{}",
        err.message()
    );
}

#[test]
fn named_handle_looks_up_by_container_and_name() {
    let mgr = ResourceMgr::new();
    let created = Arc::new(Counter::with(5));
    mgr.create::<Counter>("c1", "x", created.clone()).unwrap();
    mgr.create("", "x", Counter::with(9)).unwrap();

    let handle = ResourceHandle::named::<Counter>(op_core::Device::CPU, "c1", "x");
    assert!(!handle.is_owning());
    assert_eq!(handle.is_type::<Counter>(), Some(true));
    assert_eq!(handle.container, "c1");
    assert_eq!(handle.name, "x");
    assert_eq!(handle.type_name, std::any::type_name::<Counter>());
    assert!(Arc::ptr_eq(
        &mgr.resource::<Counter>(&handle).unwrap(),
        &created
    ));

    // "" is the default container.
    let default = ResourceHandle::named::<Counter>(op_core::Device::CPU, "", "x");
    assert_eq!(mgr.resource::<Counter>(&default).unwrap().get(), 9);
    let explicit = ResourceHandle::named::<Counter>(op_core::Device::CPU, DEFAULT_CONTAINER, "x");
    assert!(Arc::ptr_eq(
        &mgr.resource::<Counter>(&explicit).unwrap(),
        &mgr.resource::<Counter>(&default).unwrap()
    ));

    // Unknown names are NotFound.
    let missing = ResourceHandle::named::<Counter>(op_core::Device::CPU, "c1", "y");
    assert_eq!(
        mgr.resource::<Counter>(&missing).unwrap_err().code(),
        Code::NotFound
    );
}

#[test]
fn named_handle_after_delete_is_not_found_and_the_resource_lives_on() {
    static DROPS: AtomicUsize = AtomicUsize::new(0);
    let mgr = ResourceMgr::new();
    mgr.create("", "gone", Tracked::new("gone", &DROPS))
        .unwrap();
    let handle = ResourceHandle::named::<Tracked>(op_core::Device::CPU, "", "gone");
    let held = mgr.resource::<Tracked>(&handle).unwrap();
    mgr.delete::<Tracked>("", "gone").unwrap();
    let err = mgr.resource::<Tracked>(&handle).unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert!(err.message().contains("gone"), "{}", err.message());
    assert_eq!(drops(&DROPS), 0, "someone still holds it");
    drop(held);
    assert_eq!(drops(&DROPS), 1);
}

#[test]
fn untyped_handle_resolves_by_lookup() {
    let mgr = ResourceMgr::new();
    let created = Arc::new(Counter::with(2));
    mgr.create::<Counter>("box", "n", created.clone()).unwrap();
    let handle = ResourceHandle::new(op_core::Device::CPU, "box", "n", "whatever");
    assert_eq!(handle.is_type::<Counter>(), None);
    assert!(!handle.is_owning());
    assert!(Arc::ptr_eq(
        &mgr.resource::<Counter>(&handle).unwrap(),
        &created
    ));
    // With no type to check, a wrong type is simply not found.
    assert_eq!(
        mgr.resource::<Table>(&handle).unwrap_err().code(),
        Code::NotFound
    );
    let default = ResourceHandle::default();
    assert_eq!(
        mgr.resource::<Counter>(&default).unwrap_err().code(),
        Code::NotFound
    );
}

// ---------------------------------------------------------------------------
// The manager.
// ---------------------------------------------------------------------------

#[test]
fn create_twice_is_already_exists() {
    let mgr = ResourceMgr::new();
    mgr.create("c", "r", Counter::with(1)).unwrap();
    let err = mgr.create("c", "r", Counter::with(2)).unwrap_err();
    assert_eq!(err.code(), Code::AlreadyExists);
    let msg = err.message();
    assert!(msg.contains("'r'"), "{msg}");
    assert!(msg.contains("'c'"), "{msg}");
    assert!(msg.contains(std::any::type_name::<Counter>()), "{msg}");
    // The first one stays.
    assert_eq!(mgr.lookup::<Counter>("c", "r").unwrap().get(), 1);
    // Same name in another container is fine.
    mgr.create("d", "r", Counter::with(3)).unwrap();
    assert_eq!(mgr.lookup::<Counter>("d", "r").unwrap().get(), 3);
}

#[test]
fn rejected_create_drops_the_new_resource_and_keeps_the_old() {
    static DROPS: AtomicUsize = AtomicUsize::new(0);
    let mgr = ResourceMgr::new();
    mgr.create("", "r", Tracked::new("first", &DROPS)).unwrap();
    let err = mgr
        .create("", "r", Tracked::new("second", &DROPS))
        .unwrap_err();
    assert_eq!(err.code(), Code::AlreadyExists);
    assert_eq!(drops(&DROPS), 1, "the rejected resource is dropped");
    assert_eq!(mgr.lookup::<Tracked>("", "r").unwrap().label, "first");
}

#[test]
fn create_accepts_an_arc_or_a_value() {
    let mgr = ResourceMgr::new();
    let arc = Arc::new(Counter::with(1));
    mgr.create::<Counter>("", "arc", arc.clone()).unwrap();
    mgr.create("", "value", Counter::with(2)).unwrap();
    assert!(Arc::ptr_eq(
        &mgr.lookup::<Counter>("", "arc").unwrap(),
        &arc
    ));
    assert_eq!(mgr.lookup::<Counter>("", "value").unwrap().get(), 2);
    // Lookups return the same Arc each time.
    assert!(Arc::ptr_eq(
        &mgr.lookup::<Counter>("", "value").unwrap(),
        &mgr.lookup::<Counter>("", "value").unwrap()
    ));
}

#[test]
fn one_name_may_hold_two_types() {
    let mgr = ResourceMgr::new();
    mgr.create("", "both", Counter::with(8)).unwrap();
    mgr.create("", "both", Table::default()).unwrap();
    assert_eq!(mgr.lookup::<Counter>("", "both").unwrap().get(), 8);
    assert_eq!(mgr.lookup::<Table>("", "both").unwrap().memory_used(), 7);
    // Deleting one type leaves the other.
    mgr.delete::<Counter>("", "both").unwrap();
    assert_eq!(
        mgr.lookup::<Counter>("", "both").unwrap_err().code(),
        Code::NotFound
    );
    assert!(mgr.lookup::<Table>("", "both").is_ok());
}

#[test]
fn lookup_not_found_messages() {
    let mgr = ResourceMgr::new();
    let err = mgr.lookup::<Counter>("c", "missing").unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    let msg = err.message();
    assert!(msg.contains("'missing'"), "{msg}");
    assert!(msg.contains("'c'"), "{msg}");
    assert!(msg.contains(std::any::type_name::<Counter>()), "{msg}");
    assert!(!msg.contains(std::any::type_name::<Table>()), "{msg}");

    // The default container is named in the message for "".
    let err = mgr.lookup::<Counter>("", "missing").unwrap_err();
    assert!(
        err.message().contains(&format!("'{DEFAULT_CONTAINER}'")),
        "{}",
        err.message()
    );

    // A same-named resource of another type is hinted at.
    mgr.create("c", "t", Table::default()).unwrap();
    let err = mgr.lookup::<Counter>("c", "t").unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    let msg = err.message();
    assert!(msg.contains(std::any::type_name::<Counter>()), "{msg}");
    assert!(msg.contains(std::any::type_name::<Table>()), "{msg}");
    // No hint for a same-named resource in another container.
    let err = mgr.lookup::<Counter>("other", "t").unwrap_err();
    assert!(
        !err.message().contains(std::any::type_name::<Table>()),
        "{}",
        err.message()
    );
}

#[test]
fn empty_container_means_the_default_container() {
    let mgr = ResourceMgr::new();
    assert_eq!(mgr.default_container(), DEFAULT_CONTAINER);
    assert_eq!(DEFAULT_CONTAINER, "localhost");
    mgr.create("", "a", Counter::with(1)).unwrap();
    assert_eq!(mgr.lookup::<Counter>("localhost", "a").unwrap().get(), 1);
    mgr.create("localhost", "b", Counter::with(2)).unwrap();
    assert_eq!(mgr.lookup::<Counter>("", "b").unwrap().get(), 2);
    assert_eq!(
        mgr.create("localhost", "a", Counter::with(3))
            .unwrap_err()
            .code(),
        Code::AlreadyExists
    );

    let custom = ResourceMgr::with_default_container("mine");
    assert_eq!(custom.default_container(), "mine");
    custom.create("", "a", Counter::with(4)).unwrap();
    assert_eq!(custom.lookup::<Counter>("mine", "a").unwrap().get(), 4);
    assert_eq!(
        custom
            .lookup::<Counter>("localhost", "a")
            .unwrap_err()
            .code(),
        Code::NotFound
    );
    custom.delete::<Counter>("mine", "a").unwrap();
    assert!(custom.lookup::<Counter>("", "a").is_err());

    assert_eq!(ResourceMgr::default().default_container(), "localhost");
}

#[test]
fn delete_removes_and_then_is_not_found() {
    static DROPS: AtomicUsize = AtomicUsize::new(0);
    let mgr = ResourceMgr::new();
    mgr.create("c", "d", Tracked::new("d", &DROPS)).unwrap();
    mgr.delete::<Tracked>("c", "d").unwrap();
    assert_eq!(drops(&DROPS), 1, "the manager held the only reference");
    assert_eq!(
        mgr.lookup::<Tracked>("c", "d").unwrap_err().code(),
        Code::NotFound
    );
    let err = mgr.delete::<Tracked>("c", "d").unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert!(err.message().contains("'d'"), "{}", err.message());
    assert_eq!(
        mgr.delete::<Tracked>("nowhere", "d").unwrap_err().code(),
        Code::NotFound
    );
    // The name can be used again.
    mgr.create("c", "d", Tracked::new("d2", &DROPS)).unwrap();
    assert_eq!(mgr.lookup::<Tracked>("c", "d").unwrap().label, "d2");
    // Deleting a type that is not there leaves the one that is.
    assert_eq!(
        mgr.delete::<Counter>("c", "d").unwrap_err().code(),
        Code::NotFound
    );
    assert!(mgr.lookup::<Tracked>("c", "d").is_ok());
}

#[test]
fn delete_handle_removes_the_named_resource() {
    let mgr = ResourceMgr::new();
    mgr.create("c", "h", Counter::with(1)).unwrap();
    mgr.create("c", "h", Table::default()).unwrap();
    let handle = ResourceHandle::named::<Counter>(op_core::Device::CPU, "c", "h");
    mgr.delete_handle(&handle).unwrap();
    assert_eq!(
        mgr.lookup::<Counter>("c", "h").unwrap_err().code(),
        Code::NotFound
    );
    assert!(mgr.lookup::<Table>("c", "h").is_ok(), "only that type goes");
    let err = mgr.delete_handle(&handle).unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert!(
        err.message().contains(std::any::type_name::<Counter>()),
        "{}",
        err.message()
    );

    // "" in a handle is the default container.
    mgr.create("", "dflt", Counter::with(1)).unwrap();
    mgr.delete_handle(&ResourceHandle::named::<Counter>(
        op_core::Device::CPU,
        "",
        "dflt",
    ))
    .unwrap();
    assert!(mgr.lookup::<Counter>("", "dflt").is_err());
}

#[test]
fn delete_handle_without_type_is_invalid_argument() {
    let mgr = ResourceMgr::new();
    mgr.create("c", "h", Counter::with(1)).unwrap();
    let handle = ResourceHandle::new(op_core::Device::CPU, "c", "h", "Counter");
    let err = mgr.delete_handle(&handle).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("'h'"), "{}", err.message());
    assert!(
        mgr.lookup::<Counter>("c", "h").is_ok(),
        "nothing was deleted"
    );
}

#[test]
fn cleanup_removes_only_that_container() {
    static DROPS: AtomicUsize = AtomicUsize::new(0);
    let mgr = ResourceMgr::new();
    mgr.create("a", "x", Tracked::new("ax", &DROPS)).unwrap();
    mgr.create("a", "y", Tracked::new("ay", &DROPS)).unwrap();
    mgr.create("a", "y", Counter::with(1)).unwrap();
    mgr.create("b", "x", Tracked::new("bx", &DROPS)).unwrap();
    mgr.create("", "x", Tracked::new("default", &DROPS))
        .unwrap();
    let held = mgr.lookup::<Tracked>("a", "y").unwrap();

    mgr.cleanup("a");
    assert_eq!(drops(&DROPS), 1, "a/x went; a/y is held elsewhere");
    assert_eq!(
        mgr.lookup::<Tracked>("a", "x").unwrap_err().code(),
        Code::NotFound
    );
    assert_eq!(
        mgr.lookup::<Tracked>("a", "y").unwrap_err().code(),
        Code::NotFound
    );
    assert_eq!(
        mgr.lookup::<Counter>("a", "y").unwrap_err().code(),
        Code::NotFound
    );
    assert_eq!(mgr.lookup::<Tracked>("b", "x").unwrap().label, "bx");
    assert_eq!(mgr.lookup::<Tracked>("", "x").unwrap().label, "default");
    assert_eq!(held.label, "ay", "still alive while held");
    drop(held);
    assert_eq!(drops(&DROPS), 2);

    // Cleaning up a missing container is no error; the container can be
    // used again afterwards.
    mgr.cleanup("a");
    mgr.cleanup("never");
    mgr.create("a", "x", Tracked::new("again", &DROPS)).unwrap();
    assert_eq!(mgr.lookup::<Tracked>("a", "x").unwrap().label, "again");

    // "" cleans up the default container.
    mgr.cleanup("");
    assert!(mgr.lookup::<Tracked>("", "x").is_err());
    assert_eq!(drops(&DROPS), 3);
    assert!(mgr.lookup::<Tracked>("b", "x").is_ok());
}

#[test]
fn clear_removes_everything() {
    static DROPS: AtomicUsize = AtomicUsize::new(0);
    let mgr = ResourceMgr::new();
    mgr.create("a", "x", Tracked::new("ax", &DROPS)).unwrap();
    mgr.create("b", "x", Tracked::new("bx", &DROPS)).unwrap();
    mgr.create("", "x", Tracked::new("dx", &DROPS)).unwrap();
    let held = mgr.lookup::<Tracked>("b", "x").unwrap();
    mgr.clear();
    assert_eq!(drops(&DROPS), 2);
    for c in ["a", "b", ""] {
        assert_eq!(
            mgr.lookup::<Tracked>(c, "x").unwrap_err().code(),
            Code::NotFound
        );
    }
    assert_eq!(mgr.debug_string(), "");
    drop(held);
    assert_eq!(drops(&DROPS), 3);
    mgr.create("a", "x", Tracked::new("new", &DROPS)).unwrap();
    assert!(mgr.lookup::<Tracked>("a", "x").is_ok());
}

#[test]
fn dropping_the_manager_drops_its_resources() {
    static DROPS: AtomicUsize = AtomicUsize::new(0);
    let mgr = ResourceMgr::new();
    mgr.create("a", "x", Tracked::new("ax", &DROPS)).unwrap();
    mgr.create("b", "y", Tracked::new("by", &DROPS)).unwrap();
    let held = mgr.lookup::<Tracked>("a", "x").unwrap();
    drop(mgr);
    assert_eq!(drops(&DROPS), 1);
    drop(held);
    assert_eq!(drops(&DROPS), 2);
}

#[test]
fn unowned_entries_vanish_with_their_resource() {
    static DROPS: AtomicUsize = AtomicUsize::new(0);
    let mgr = ResourceMgr::new();
    let resource = Arc::new(Tracked::new("weak", &DROPS));
    mgr.create_unowned("c", "u", &resource).unwrap();
    let found = mgr.lookup::<Tracked>("c", "u").unwrap();
    assert!(Arc::ptr_eq(&found, &resource));
    assert!(mgr.debug_string().contains("c/u"), "{}", mgr.debug_string());
    // While it lives, the name is taken.
    assert_eq!(
        mgr.create("c", "u", Tracked::new("other", &DROPS))
            .unwrap_err()
            .code(),
        Code::AlreadyExists
    );
    assert_eq!(drops(&DROPS), 1, "the rejected one");
    assert_eq!(
        mgr.create_unowned("c", "u", &resource).unwrap_err().code(),
        Code::AlreadyExists
    );
    // A named handle resolves it too.
    let handle = ResourceHandle::named::<Tracked>(op_core::Device::CPU, "c", "u");
    assert!(Arc::ptr_eq(
        &mgr.resource::<Tracked>(&handle).unwrap(),
        &resource
    ));

    drop(found);
    assert_eq!(drops(&DROPS), 1, "the manager does not own it");
    drop(resource);
    assert_eq!(drops(&DROPS), 2, "the last owner dropped it");
    assert_eq!(
        mgr.lookup::<Tracked>("c", "u").unwrap_err().code(),
        Code::NotFound
    );
    assert_eq!(
        mgr.resource::<Tracked>(&handle).unwrap_err().code(),
        Code::NotFound
    );
    assert_eq!(mgr.debug_string(), "", "dead entries are not listed");
    // A dead entry is not there to delete.
    assert_eq!(
        mgr.delete::<Tracked>("c", "u").unwrap_err().code(),
        Code::NotFound
    );

    // The name is free again, for an owned or an unowned resource.
    mgr.create("c", "u", Tracked::new("owned", &DROPS)).unwrap();
    assert_eq!(mgr.lookup::<Tracked>("c", "u").unwrap().label, "owned");
    mgr.delete::<Tracked>("c", "u").unwrap();
    assert_eq!(drops(&DROPS), 3);
    let again = Arc::new(Tracked::new("again", &DROPS));
    mgr.create_unowned("c", "u", &again).unwrap();
    assert!(Arc::ptr_eq(
        &mgr.lookup::<Tracked>("c", "u").unwrap(),
        &again
    ));
}

#[test]
fn dead_unowned_entry_gives_no_other_type_hint_and_is_recreated_by_lookup_or_create() {
    let mgr = ResourceMgr::new();
    let table = Arc::new(Table::default());
    mgr.create_unowned("", "n", &table).unwrap();
    let err = mgr.lookup::<Counter>("", "n").unwrap_err();
    assert!(
        err.message().contains(std::any::type_name::<Table>()),
        "{}",
        err.message()
    );
    drop(table);
    let err = mgr.lookup::<Counter>("", "n").unwrap_err();
    assert!(
        !err.message().contains(std::any::type_name::<Table>()),
        "a dead resource is no hint: {}",
        err.message()
    );
    let fresh = mgr
        .lookup_or_create("", "n", || Ok(Table::default()))
        .unwrap();
    assert!(Arc::ptr_eq(&fresh, &mgr.lookup::<Table>("", "n").unwrap()));
    drop(fresh);
    assert!(
        mgr.lookup::<Table>("", "n").is_ok(),
        "now the manager owns it"
    );
}

#[test]
fn debug_string_lists_live_entries_sorted() {
    let mgr = ResourceMgr::new();
    assert_eq!(mgr.debug_string(), "");
    mgr.create("b", "z", Counter::with(2)).unwrap();
    mgr.create("a", "y", Counter::with(1)).unwrap();
    mgr.create("", "x", Table::default()).unwrap();
    let unowned = Arc::new(Counter::with(3));
    mgr.create_unowned("a", "w", &unowned).unwrap();
    let counter = std::any::type_name::<Counter>();
    let table = std::any::type_name::<Table>();
    let expected = [
        format!("a/w ({counter}): Counter(3)"),
        format!("a/y ({counter}): Counter(1)"),
        format!("b/z ({counter}): Counter(2)"),
        format!("localhost/x ({table}): Table of 0"),
    ]
    .join("\n");
    assert_eq!(mgr.debug_string(), expected);
    assert_eq!(format!("{mgr:?}"), expected);
    // Live state shows.
    *mgr.lookup::<Counter>("a", "y").unwrap().0.lock().unwrap() = 10;
    assert!(mgr.debug_string().contains("Counter(10)"));
    drop(unowned);
    assert!(
        !mgr.debug_string().contains("a/w"),
        "{}",
        mgr.debug_string()
    );
    mgr.delete::<Counter>("b", "z").unwrap();
    assert!(!mgr.debug_string().contains("b/z"));
}

// ---------------------------------------------------------------------------
// lookup_or_create.
// ---------------------------------------------------------------------------

#[test]
fn lookup_or_create_creates_once() {
    let mgr = ResourceMgr::new();
    let calls = AtomicUsize::new(0);
    let a = mgr
        .lookup_or_create("", "lc", || {
            calls.fetch_add(1, Ordering::SeqCst);
            Ok(Counter::with(1))
        })
        .unwrap();
    let b = mgr
        .lookup_or_create("", "lc", || -> op_core::Result<Counter> {
            calls.fetch_add(1, Ordering::SeqCst);
            panic!("the creator must not run when the resource exists")
        })
        .unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert!(Arc::ptr_eq(&a, &b));
    assert!(Arc::ptr_eq(
        &a,
        &mgr.lookup::<Counter>("localhost", "lc").unwrap()
    ));
    // An existing resource made by create is found too.
    mgr.create("c", "made", Counter::with(7)).unwrap();
    let made = mgr
        .lookup_or_create("c", "made", || Ok(Counter::with(0)))
        .unwrap();
    assert_eq!(made.get(), 7);
    // Another type under the same name is another resource.
    let t = mgr
        .lookup_or_create("", "lc", || Ok(Table::default()))
        .unwrap();
    assert_eq!(t.memory_used(), 7);
    assert!(mgr.lookup::<Counter>("", "lc").is_ok());
}

#[test]
fn lookup_or_create_returns_the_creator_error_and_stores_nothing() {
    let mgr = ResourceMgr::new();
    let err = mgr
        .lookup_or_create::<Counter>("", "bad", || {
            Err(op_core::Error::resource_exhausted("no room"))
        })
        .unwrap_err();
    assert_eq!(err.code(), Code::ResourceExhausted);
    assert_eq!(err.message(), "no room");
    assert_eq!(
        mgr.lookup::<Counter>("", "bad").unwrap_err().code(),
        Code::NotFound
    );
    assert_eq!(mgr.debug_string(), "");
    // A later call creates it.
    let ok = mgr
        .lookup_or_create("", "bad", || Ok(Counter::with(4)))
        .unwrap();
    assert_eq!(ok.get(), 4);
}

#[test]
fn lookup_or_create_survives_a_panicking_creator() {
    let mgr = Arc::new(ResourceMgr::new());
    let m = mgr.clone();
    let joined = thread::spawn(move || {
        m.lookup_or_create::<Counter>("", "p", || panic!("creator panicked"))
    })
    .join();
    assert!(joined.is_err());
    // The manager still works (its lock is not left poisoned for good).
    assert!(mgr.lookup::<Counter>("", "p").is_err());
    let c = mgr
        .lookup_or_create("", "p", || Ok(Counter::with(1)))
        .unwrap();
    assert_eq!(c.get(), 1);
}

#[test]
fn racing_lookup_or_create_creates_one_resource() {
    static DROPS: AtomicUsize = AtomicUsize::new(0);
    const THREADS: usize = 16;
    for round in 0..20 {
        let mgr = Arc::new(ResourceMgr::new());
        let calls = Arc::new(AtomicUsize::new(0));
        let barrier = Arc::new(Barrier::new(THREADS));
        let drops_before = drops(&DROPS);
        let threads: Vec<_> = (0..THREADS)
            .map(|_| {
                let (mgr, calls, barrier) = (mgr.clone(), calls.clone(), barrier.clone());
                thread::spawn(move || {
                    barrier.wait();
                    mgr.lookup_or_create("", "race", || {
                        calls.fetch_add(1, Ordering::SeqCst);
                        thread::yield_now();
                        Ok(Tracked::new("race", &DROPS))
                    })
                    .unwrap()
                })
            })
            .collect();
        let got: Vec<Arc<Tracked>> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        assert_eq!(calls.load(Ordering::SeqCst), 1, "round {round}");
        assert_eq!(
            drops(&DROPS),
            drops_before,
            "nothing created and thrown away"
        );
        let stored = mgr.lookup::<Tracked>("", "race").unwrap();
        for r in &got {
            assert!(Arc::ptr_eq(r, &stored), "round {round}");
        }
        drop(got);
        drop(stored);
        drop(mgr);
        assert_eq!(drops(&DROPS), drops_before + 1, "round {round}");
    }
}

#[test]
fn racing_lookup_or_create_on_different_names() {
    const THREADS: usize = 16;
    let mgr = Arc::new(ResourceMgr::new());
    let calls = Arc::new(AtomicUsize::new(0));
    let barrier = Arc::new(Barrier::new(THREADS));
    let threads: Vec<_> = (0..THREADS)
        .map(|i| {
            let (mgr, calls, barrier) = (mgr.clone(), calls.clone(), barrier.clone());
            thread::spawn(move || {
                barrier.wait();
                let mut last = None;
                for _ in 0..50 {
                    let r = mgr
                        .lookup_or_create("", &format!("name{i}"), || {
                            calls.fetch_add(1, Ordering::SeqCst);
                            Ok(Counter::with(i as i64))
                        })
                        .unwrap();
                    *r.0.lock().unwrap() += 1000;
                    if let Some(prev) = &last {
                        assert!(Arc::ptr_eq(prev, &r));
                    }
                    last = Some(r);
                }
            })
        })
        .collect();
    within_seconds(60, move || {
        for t in threads {
            t.join().unwrap();
        }
    });
    assert_eq!(calls.load(Ordering::SeqCst), THREADS);
    for i in 0..THREADS {
        let r = mgr.lookup::<Counter>("", &format!("name{i}")).unwrap();
        assert_eq!(r.get(), i as i64 + 50 * 1000);
    }
}

// ---------------------------------------------------------------------------
// Resources whose drop uses the manager.
// ---------------------------------------------------------------------------

/// A resource whose `Drop` uses the manager it lives in (as a resource that
/// unregisters a companion entry would): the manager must not drop
/// resources while it holds its own lock.
struct UsesManagerOnDrop {
    mgr: Weak<ResourceMgr>,
    drops: &'static AtomicUsize,
}

impl Resource for UsesManagerOnDrop {
    fn debug_string(&self) -> String {
        "UsesManagerOnDrop".into()
    }
}

impl Drop for UsesManagerOnDrop {
    fn drop(&mut self) {
        if let Some(mgr) = self.mgr.upgrade() {
            let _ = mgr.lookup::<Counter>("", "companion");
            let _ = mgr.debug_string();
        }
        self.drops.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn delete_cleanup_and_clear_drop_resources_outside_the_lock() {
    static DROPS: AtomicUsize = AtomicUsize::new(0);
    within_seconds(20, || {
        let mgr = Arc::new(ResourceMgr::new());
        let make = || UsesManagerOnDrop {
            mgr: Arc::downgrade(&mgr),
            drops: &DROPS,
        };
        mgr.create("", "a", make()).unwrap();
        mgr.delete::<UsesManagerOnDrop>("", "a").unwrap();
        assert_eq!(drops(&DROPS), 1);

        mgr.create("", "b", make()).unwrap();
        mgr.delete_handle(&ResourceHandle::named::<UsesManagerOnDrop>(
            op_core::Device::CPU,
            "",
            "b",
        ))
        .unwrap();
        assert_eq!(drops(&DROPS), 2);

        mgr.create("c", "c", make()).unwrap();
        mgr.cleanup("c");
        assert_eq!(drops(&DROPS), 3);

        mgr.create("d", "d", make()).unwrap();
        mgr.create("e", "e", make()).unwrap();
        mgr.clear();
        assert_eq!(drops(&DROPS), 5);

        // A rejected create drops its resource outside the lock too.
        mgr.create("", "f", make()).unwrap();
        assert!(mgr.create("", "f", make()).is_err());
        assert_eq!(drops(&DROPS), 6);
    });
}

// ---------------------------------------------------------------------------
// ContainerInfo.
// ---------------------------------------------------------------------------

#[test]
fn container_info_default_container_and_shared_name() {
    let mgr = ResourceMgr::new();
    let info = ContainerInfo::new(&mgr, "", "table", "node", false).unwrap();
    assert_eq!(info.container(), "localhost");
    assert_eq!(info.name(), "table");
    assert!(!info.resource_is_private_to_kernel());

    let custom = ResourceMgr::with_default_container("mine");
    let info = ContainerInfo::new(&custom, "", "table", "node", true).unwrap();
    assert_eq!(info.container(), "mine");
    assert_eq!(info.name(), "table", "shared_name wins over the node name");
    assert!(!info.resource_is_private_to_kernel());

    let info = ContainerInfo::new(&mgr, "explicit", "t", "node", false).unwrap();
    assert_eq!(info.container(), "explicit");
    assert_eq!(info.name(), "t");
}

#[test]
fn container_info_valid_and_invalid_container_names() {
    let mgr = ResourceMgr::new();
    for ok in [
        "a",
        "A",
        "0",
        ".",
        ".hidden",
        "a_b",
        "a.b",
        "a-b",
        "a/b",
        "job/task-0/x_1.y",
        "9lives",
    ] {
        let info = ContainerInfo::new(&mgr, ok, "n", "node", false)
            .unwrap_or_else(|e| panic!("{ok:?} should be valid: {e:?}"));
        assert_eq!(info.container(), ok);
    }
    for bad in [
        "_a", "-a", "/a", "a b", "a:b", "a*", " a", "a\n", "é", "a@b",
    ] {
        let err = ContainerInfo::new(&mgr, bad, "n", "node", false).unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "{bad:?}");
        assert!(err.message().contains(bad), "{bad:?}: {}", err.message());
    }
}

#[test]
fn container_info_shared_name_may_not_start_with_underscore() {
    let mgr = ResourceMgr::new();
    for bad in ["_", "_x", "__y"] {
        let err = ContainerInfo::new(&mgr, "", bad, "node", true).unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "{bad:?}");
        assert!(err.message().contains(bad), "{}", err.message());
    }
    // An underscore elsewhere is fine.
    let info = ContainerInfo::new(&mgr, "", "x_", "node", false).unwrap();
    assert_eq!(info.name(), "x_");
}

#[test]
fn container_info_node_name_as_default() {
    let mgr = ResourceMgr::new();
    let info = ContainerInfo::new(&mgr, "", "", "my/node", true).unwrap();
    assert_eq!(info.container(), "localhost");
    assert_eq!(info.name(), "my/node");
    assert!(!info.resource_is_private_to_kernel());
    assert_eq!(
        info,
        ContainerInfo::new(&mgr, "", "", "my/node", true).unwrap(),
        "a shared name: the same each time"
    );
}

#[test]
fn container_info_private_names_are_unique() {
    let mgr = ResourceMgr::new();
    let a = ContainerInfo::new(&mgr, "", "", "node", false).unwrap();
    let b = ContainerInfo::new(&mgr, "", "", "node", false).unwrap();
    for info in [&a, &b] {
        assert!(info.resource_is_private_to_kernel());
        assert_eq!(info.container(), "localhost");
        let name = info.name();
        let rest = name.strip_prefix('_').unwrap_or_else(|| panic!("{name}"));
        let (n, node) = rest.split_once('_').unwrap_or_else(|| panic!("{name}"));
        assert!(
            !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()),
            "{name}"
        );
        assert_eq!(node, "node");
    }
    assert_ne!(a.name(), b.name());
    assert_ne!(a, b);

    // Unique across threads too.
    let names: Vec<String> = (0..8)
        .map(|_| {
            thread::spawn(|| {
                let mgr = ResourceMgr::new();
                (0..100)
                    .map(|_| {
                        ContainerInfo::new(&mgr, "c", "", "n", false)
                            .unwrap()
                            .name()
                            .to_owned()
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    let unique: HashSet<&String> = names.iter().collect();
    assert_eq!(unique.len(), names.len());
}

#[test]
fn container_info_private_name_can_hold_a_resource() {
    let mgr = ResourceMgr::new();
    let info = ContainerInfo::new(&mgr, "", "", "kernel", false).unwrap();
    let r = mgr
        .lookup_or_create(info.container(), info.name(), || Ok(Counter::with(1)))
        .unwrap();
    assert!(Arc::ptr_eq(
        &r,
        &mgr.lookup::<Counter>(info.container(), info.name())
            .unwrap()
    ));
}

// ---------------------------------------------------------------------------
// Handle equality, hashing and Debug.
// ---------------------------------------------------------------------------

#[test]
fn handle_equality_and_hash() {
    let counter = Arc::new(Counter::with(1));
    let a = ResourceHandle::owning(op_core::Device::CPU, counter.clone());
    let a2 = a.clone();
    assert_eq!(a, a2);

    // Another owning handle of the same resource has another name.
    let b = ResourceHandle::owning(op_core::Device::CPU, counter.clone());
    assert_ne!(a.name, b.name);
    assert_ne!(a, b);

    // Same names, different resources: not equal.
    let mut c = ResourceHandle::owning(op_core::Device::CPU, Arc::new(Counter::with(1)));
    c.name = a.name.clone();
    assert_ne!(a, c);
    // Same names, same resource: equal.
    let mut d = ResourceHandle::owning(op_core::Device::CPU, counter.clone());
    d.name = a.name.clone();
    assert_eq!(a, d);

    // An owning handle is not equal to a non-owning one with the same name.
    let named = ResourceHandle::named::<Counter>(op_core::Device::CPU, "", a.name.clone());
    assert_ne!(a, named);
    assert_ne!(named, a);

    // Non-owning handles compare by device, container, name and type.
    let n1 = ResourceHandle::named::<Counter>(op_core::Device::CPU, "c", "n");
    let n2 = ResourceHandle::named::<Counter>(op_core::Device::CPU, "c", "n");
    assert_eq!(n1, n2);
    assert_ne!(
        n1,
        ResourceHandle::named::<Table>(op_core::Device::CPU, "c", "n")
    );
    assert_ne!(
        n1,
        ResourceHandle::named::<Counter>(op_core::Device::gpu(0), "c", "n")
    );
    assert_ne!(
        n1,
        ResourceHandle::named::<Counter>(op_core::Device::CPU, "d", "n")
    );
    assert_ne!(
        n1,
        ResourceHandle::named::<Counter>(op_core::Device::CPU, "c", "m")
    );
    assert_eq!(
        ResourceHandle::new(op_core::Device::CPU, "c", "n", "T"),
        ResourceHandle::new(op_core::Device::CPU, "c", "n", "T")
    );
    assert_ne!(
        ResourceHandle::new(op_core::Device::CPU, "c", "n", "T"),
        ResourceHandle::new(op_core::Device::CPU, "c", "n", "U")
    );

    let set: HashSet<ResourceHandle> = [a.clone(), a2, b.clone(), c.clone(), d, n1, n2]
        .into_iter()
        .collect();
    assert_eq!(set.len(), 4, "a (= a2 = d), b, c, n1 (= n2)");
    assert!(set.contains(&a));
    assert!(set.contains(&b));
    assert!(set.contains(&c));
    assert!(set.contains(&ResourceHandle::named::<Counter>(
        op_core::Device::CPU,
        "c",
        "n"
    )));
    assert!(!set.contains(&named));
}

#[test]
fn handle_debug_shows_the_owned_resource() {
    let counter = Arc::new(Counter::with(42));
    let owning = ResourceHandle::owning(op_core::Device::CPU, counter.clone());
    let debug = format!("{owning:?}");
    assert!(debug.contains("Counter(42)"), "{debug}");
    assert!(debug.contains("/device:CPU:0"), "{debug}");
    assert!(debug.contains(&owning.name), "{debug}");
    *counter.0.lock().unwrap() = 43;
    assert!(format!("{owning:?}").contains("Counter(43)"), "live state");

    let named = ResourceHandle::named::<Counter>(op_core::Device::CPU, "c", "n");
    let debug = format!("{named:?}");
    assert!(!debug.contains("Counter("), "{debug}");
    assert!(debug.contains("\"n\""), "{debug}");
    assert!(debug.contains(std::any::type_name::<Counter>()), "{debug}");
}

// ---------------------------------------------------------------------------
// Concurrency.
// ---------------------------------------------------------------------------

#[test]
fn concurrent_create_lookup_delete_stays_consistent() {
    const THREADS: usize = 8;
    const ITERATIONS: usize = 300;
    static DROPS: AtomicUsize = AtomicUsize::new(0);
    let mgr = Arc::new(ResourceMgr::new());
    let created = Arc::new(AtomicUsize::new(0));
    let barrier = Arc::new(Barrier::new(THREADS));
    let threads: Vec<_> = (0..THREADS)
        .map(|t| {
            let (mgr, created, barrier) = (mgr.clone(), created.clone(), barrier.clone());
            thread::spawn(move || {
                barrier.wait();
                for i in 0..ITERATIONS {
                    // A name only this thread uses: every step is predictable.
                    let own = format!("own{t}");
                    mgr.create("own", &own, Tracked::new("own", &DROPS))
                        .unwrap();
                    created.fetch_add(1, Ordering::SeqCst);
                    assert_eq!(mgr.lookup::<Tracked>("own", &own).unwrap().label, "own");
                    mgr.delete::<Tracked>("own", &own).unwrap();
                    assert_eq!(
                        mgr.lookup::<Tracked>("own", &own).unwrap_err().code(),
                        Code::NotFound
                    );

                    // Shared names: any outcome but a wrong code is fine.
                    let shared = format!("shared{}", i % 3);
                    match mgr.create("shared", &shared, Tracked::new("shared", &DROPS)) {
                        Ok(()) => {
                            created.fetch_add(1, Ordering::SeqCst);
                        }
                        Err(e) => {
                            assert_eq!(e.code(), Code::AlreadyExists);
                            created.fetch_add(1, Ordering::SeqCst); // dropped at once
                        }
                    }
                    match mgr.lookup::<Tracked>("shared", &shared) {
                        Ok(r) => assert_eq!(r.label, "shared"),
                        Err(e) => assert_eq!(e.code(), Code::NotFound),
                    }
                    if i % 2 == t % 2
                        && let Err(e) = mgr.delete::<Tracked>("shared", &shared)
                    {
                        assert_eq!(e.code(), Code::NotFound);
                    }
                    let c = mgr
                        .lookup_or_create("counters", &shared, || Ok(Counter::default()))
                        .unwrap();
                    *c.0.lock().unwrap() += 1;
                    if i % 50 == 0 {
                        let _ = mgr.debug_string();
                    }
                }
            })
        })
        .collect();
    within_seconds(120, move || {
        for t in threads {
            t.join().unwrap();
        }
    });

    // Every own name was deleted; the counters saw every increment.
    for t in 0..THREADS {
        assert!(mgr.lookup::<Tracked>("own", &format!("own{t}")).is_err());
    }
    let total: i64 = (0..3)
        .map(|i| {
            mgr.lookup::<Counter>("counters", &format!("shared{i}"))
                .unwrap()
                .get()
        })
        .sum();
    assert_eq!(total, (THREADS * ITERATIONS) as i64);
    // Everything created is dropped, or still in the manager.
    let live = (0..3)
        .filter(|i| {
            mgr.lookup::<Tracked>("shared", &format!("shared{i}"))
                .is_ok()
        })
        .count();
    assert_eq!(drops(&DROPS) + live, created.load(Ordering::SeqCst));
    mgr.clear();
    assert_eq!(drops(&DROPS), created.load(Ordering::SeqCst));
    assert_eq!(mgr.debug_string(), "");
}

#[test]
fn errors_quote_huge_names_and_containers_at_a_bounded_length() {
    static DROPS: AtomicUsize = AtomicUsize::new(0);
    let mgr = ResourceMgr::new();
    let name = "n".repeat(10 << 20);
    let container = "c".repeat(10 << 20);
    let short = |error: op_core::Error, parts: &[&str]| {
        let message = error.to_string();
        assert!(message.len() < 2048, "{} bytes", message.len());
        for part in parts {
            assert!(message.contains(part), "{part:?} in {message}");
        }
    };
    let cut = format!("…' ({} bytes)", name.len());

    let err = mgr.lookup::<Tracked>(&container, &name).unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    short(err, &["resource 'nnn", &cut, "in container 'ccc"]);
    let err = mgr.delete::<Tracked>("", &name).unwrap_err();
    short(err, &["resource 'nnn", &cut]);
    mgr.create::<Tracked>("", &name, Tracked::new("big", &DROPS))
        .unwrap();
    let err = mgr
        .create::<Tracked>("", &name, Tracked::new("again", &DROPS))
        .unwrap_err();
    assert_eq!(err.code(), Code::AlreadyExists);
    short(err, &["resource 'nnn", &cut]);

    let handle = ResourceHandle::named::<Tracked>(op_core::Device::CPU, &container, &name);
    short(mgr.resource::<Tracked>(&handle).unwrap_err(), &[&cut]);
    let err = ContainerInfo::new(&mgr, &format!("_{container}"), "", "node", true).unwrap_err();
    short(err, &["container '_ccc", "invalid characters"]);
    let err = ContainerInfo::new(&mgr, "", &format!("_{name}"), "node", true).unwrap_err();
    short(err, &["shared_name '_nnn", "cannot start with '_'"]);
}
