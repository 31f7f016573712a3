//! The per-thread call cache: [`OpCall`]s that asked for the same node
//! find its prepared op without locking.

use std::cell::RefCell;
use std::marker::PhantomData;
use std::rc::Rc;
use std::sync::Weak;

use op_spec::{AttrValue, DType};
use rustc_hash::FxHashMap;

use super::{OpCall, PreparedOp, Runtime};
use crate::tensor::Tensor;

/// More distinct requests than this on one thread start the cache afresh.
const CALL_CACHE_LIMIT: usize = 4096;

/// One thread's prepared ops by request, with the last one found kept
/// aside: a loop that calls one op over and over skips the map.
#[derive(Default)]
pub(super) struct CallCache {
    last: Option<Rc<CacheEntry>>,
    by_hash: FxHashMap<u64, Vec<Rc<CacheEntry>>>,
}

/// A request and its prepared op.
///
/// The op is held weakly: its runtime owns it, so that dropping the
/// runtime frees its kernels and resources even while threads that called
/// it keep their caches. An entry of a dropped runtime matches no live
/// runtime (ids are never reused) and costs only its request and the op's
/// empty allocation until the cache starts afresh.
pub(super) struct CacheEntry {
    request: CachedRequest,
    pub(super) prepared: Weak<PreparedOp>,
}

/// A cache entry that matched a call on the runtime it borrows. Only
/// [`CallCache::lookup`] makes one, after comparing the entry's runtime
/// id with the runtime's: what lets [`Hit::op`] skip the reference count.
pub(super) struct Hit<'r> {
    pub(super) entry: Rc<CacheEntry>,
    /// The runtime the entry matched, borrowed while the hit lives.
    runtime: PhantomData<&'r Runtime>,
}

impl Hit<'_> {
    /// The prepared op: a plain reference, no reference count touched (a
    /// hit costs no atomic operation, and threads calling one op share no
    /// counter).
    #[inline]
    pub(super) fn op(&self) -> &PreparedOp {
        // SAFETY: the entry was made (in `OpCall::prepared`) from the
        // `Arc` that `runtime.prepare_node` returned, which is the one
        // kept in the runtime's slot for the node. `lookup` made this hit
        // only for the runtime of the entry's id (ids are unique and never
        // reused), and that runtime stays borrowed for `'r`, which
        // outlives `&self`. A runtime never removes or empties a slot
        // while it lives, and the entry's `Weak` keeps the allocation. So
        // the strong count stays at least 1 while the reference lives, and
        // the pointer is to a live `PreparedOp`, only ever shared.
        unsafe { &*self.entry.prepared.as_ptr() }
    }
}

thread_local! {
    static CALL_CACHE: RefCell<CallCache> = RefCell::new(CallCache::default());
}

impl CallCache {
    /// The entry for `call` on runtime `runtime`, if this thread has one:
    /// the last one found if it matches (a loop calling one op over and
    /// over needs no hash), else by the request's hash. The entry is a
    /// cheap (non-atomic) clone, so the cache is not borrowed while its op
    /// runs: a kernel that calls ops itself uses the cache too.
    #[inline]
    pub(super) fn lookup<'r>(runtime: &'r Runtime, call: &OpCall<'_>) -> Option<Hit<'r>> {
        let id = runtime.id;
        let entry = CALL_CACHE.with(|cache| {
            let mut cache = cache.try_borrow_mut().ok()?;
            if let Some(last) = &cache.last
                && last.request.matches(id, call)
            {
                return Some(last.clone());
            }
            let hash = call.request_hash(id);
            let found = cache
                .by_hash
                .get(&hash)?
                .iter()
                .find(|entry| entry.request.matches(id, call))?
                .clone();
            cache.last = Some(found.clone());
            Some(found)
        })?;
        // `matches` compared the entry's runtime id with `runtime`'s.
        Some(Hit {
            entry,
            runtime: PhantomData,
        })
    }

    pub(super) fn insert(hash: u64, request: CachedRequest, prepared: Weak<PreparedOp>) {
        CALL_CACHE.with(|cache| {
            // Busy only if a kernel prepares an op while the cache is being
            // updated around it: that request simply goes uncached.
            let Ok(mut cache) = cache.try_borrow_mut() else {
                return;
            };
            if cache.by_hash.len() >= CALL_CACHE_LIMIT {
                cache.by_hash.clear();
            }
            let entry = Rc::new(CacheEntry { request, prepared });
            cache.by_hash.entry(hash).or_default().push(entry.clone());
            cache.last = Some(entry);
        });
    }
}

/// An [`OpCall`]'s request, kept to confirm a cache hit.
pub(super) struct CachedRequest {
    runtime: u64,
    op: String,
    node_name: Option<String>,
    args: Vec<Option<usize>>,
    dtypes: Vec<DType>,
    attrs: Vec<(String, AttrValue)>,
}

impl CachedRequest {
    pub(super) fn new(runtime: u64, call: &OpCall<'_>) -> Self {
        CachedRequest {
            runtime,
            op: call.op.to_owned(),
            node_name: call.node_name.map(str::to_owned),
            args: call.args.clone(),
            dtypes: call.inputs.iter().map(Tensor::dtype).collect(),
            attrs: call
                .attrs
                .iter()
                .map(|(n, v)| ((*n).to_owned(), v.clone()))
                .collect(),
        }
    }

    #[inline]
    fn matches(&self, runtime: u64, call: &OpCall<'_>) -> bool {
        // Counts first: they reject most mismatches without a loop.
        self.runtime == runtime
            && self.dtypes.len() == call.inputs.len()
            && self.attrs.len() == call.attrs.len()
            && self.args.len() == call.args.len()
            && self.op == call.op
            && self.node_name.as_deref() == call.node_name
            && self
                .dtypes
                .iter()
                .zip(&call.inputs)
                .all(|(d, t)| *d == t.dtype())
            && self.args == call.args
            && self
                .attrs
                .iter()
                .zip(&call.attrs)
                .all(|((n, v), (cn, cv))| n == cn && v == cv)
    }
}

#[cfg(test)]
mod tests {
    //! The call cache's use of its `Weak`s (run under Miri in CI, with the
    //! crate's other unit tests): hits on a live runtime, and nothing kept
    //! of a dropped one.

    use std::sync::Arc;

    use super::*;
    use crate::Result;
    use crate::context::KernelContext;
    use crate::executor::Executor;
    use crate::kernel::FnKernel;
    use crate::registry::{KernelRegistration, OpRegistration, Registry};
    use crate::{DeviceType, OpDefBuilder};

    fn twice(ctx: &mut KernelContext<'_>, _: &()) -> Result<()> {
        let x = ctx.input(0)?.scalar_value::<i32>()?;
        ctx.set_output(0, Tensor::scalar(2 * x))
    }

    static TWICE: OpRegistration = OpRegistration::new(
        "CacheTwice",
        || {
            OpDefBuilder::new("CacheTwice")
                .input("x: int32")
                .output("y: int32")
                .build()
        },
        file!(),
        line!(),
    );
    static TWICE_CPU: KernelRegistration = KernelRegistration::new(
        "CacheTwice",
        DeviceType::Cpu,
        "twice",
        |c| FnKernel::<()>::create(c, twice),
        file!(),
        line!(),
    );

    #[test]
    fn hits_use_the_live_runtime_s_op_and_a_dropped_runtime_keeps_nothing() {
        let registry = Arc::new(Registry::new([&TWICE], [&TWICE_CPU]));
        for round in 0..2 {
            let runtime = Runtime::with_registry(registry.clone());
            let call = || OpCall::new("CacheTwice").input(Tensor::scalar(round + 3));
            // A miss fills this thread's cache; then hits by both paths.
            let prepared = Arc::downgrade(&call().prepared(&runtime).unwrap());
            for _ in 0..2 {
                let y = call().run_on(&runtime).unwrap();
                assert_eq!(y[0].scalar_value::<i32>().unwrap(), 2 * (round + 3));
                let [y] = runtime.execute_array::<1>(call()).unwrap();
                assert_eq!(y.scalar_value::<i32>().unwrap(), 2 * (round + 3));
            }
            let state = Arc::downgrade(&runtime.state);
            assert_eq!(prepared.strong_count(), 1, "only the runtime owns it");
            drop(runtime);
            assert!(prepared.upgrade().is_none(), "round {round}");
            assert!(state.upgrade().is_none(), "round {round}");
        }
    }
}
