// The C++ that TensorFlow's C API cannot replace: resource handles, plain
// inputs and outputs without the C API's per-tensor wrappers, and the CUDA
// stream of a GPU kernel.
//
// TensorFlow's C API has no call that makes a DT_RESOURCE tensor or reads
// the C++ `ResourceHandle` objects such a tensor holds (`TF_GetInput`
// serializes a handle into a proto and drops the resource it owns). These
// functions do exactly that and nothing else; every decision (which
// resource, what type, what error) stays in Rust (op-tf's `resources.rs`).
//
// Built by op-tf's build.rs into a shared library of its own, against the
// headers of one TensorFlow release (its C++ ABI: rebuild for another
// release), and loaded by an op library when TensorFlow loads that library.
// Every function is `extern "C"` and catches nothing: none of them throws
// (TensorFlow is built without exceptions), errors go out as a TF_Status.

#include <cstdint>
#include <string>

#include "tensorflow/c/kernels.h"
#include "tensorflow/c/tf_status.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/resource_base.h"
#include "tensorflow/core/framework/resource_handle.h"
#include "xla/stream_executor/stream.h"

namespace {

using tensorflow::OpKernelContext;
using tensorflow::ResourceHandle;

typedef void (*OpkitDrop)(void* payload);

// A resource that TensorFlow ref-counts and a Rust library owns: `payload`
// is the library's (its handle to the Rust resource), given back to `drop`
// when TensorFlow releases the last handle. `library` tells the libraries
// that load this shim apart: a payload is read only by the library that
// made it. The first two fields keep their order in every version of this
// file, as another library's copy may read them.
class RustResource : public tensorflow::ResourceBase {
 public:
  RustResource(const void* library, void* payload, OpkitDrop drop,
               std::string type_name)
      : library_(library),
        payload_(payload),
        drop_(drop),
        type_name_(std::move(type_name)) {}
  ~RustResource() override { drop_(payload_); }

  std::string DebugString() const override { return type_name_; }

  const void* library_;
  void* payload_;

 private:
  OpkitDrop drop_;
  std::string type_name_;
};

OpKernelContext* context(TF_OpKernelContext* ctx) {
  // TensorFlow's own C API (tensorflow/c/kernels.cc) casts the same way.
  return reinterpret_cast<OpKernelContext*>(ctx);
}

std::string text(const char* data, size_t len) {
  return std::string(data == nullptr ? "" : data, len);
}

void set_status(TF_Status* status, const absl::Status& s) {
  TF_SetStatus(status, static_cast<TF_Code>(s.code()),
               std::string(s.message()).c_str());
}

// The handle at `element` of output `index` (allocated by
// opkit_tf_allocate_resource_output).
ResourceHandle& output_handle(TF_OpKernelContext* ctx, int index,
                              int64_t element) {
  return context(ctx)->mutable_output(index)->flat<ResourceHandle>()(element);
}

}  // namespace

extern "C" {

// What a Rust library reads of one input handle.
struct OpkitHandleView {
  // 0: a handle that owns a resource of the library that asks (`payload`
  // set); 1: a named handle (TensorFlow's ResourceMgr kind, no resource
  // owned); 2: a handle that owns a resource of TensorFlow's or of another
  // library (`type_name` says which).
  int32_t kind;
  void* payload;
  const char* container;
  size_t container_len;
  const char* name;
  size_t name_len;
  const char* type_name;
  size_t type_name_len;
};

// The TensorFlow version whose headers this was built against (build.rs
// defines it: the headers leave TF_VERSION_STRING to TensorFlow's build).
const char* opkit_tf_shim_version() { return OPKIT_TF_VERSION; }

// sizeof(OpkitHandleView): the Rust side checks its layout against it.
size_t opkit_tf_shim_handle_view_size() { return sizeof(OpkitHandleView); }

// The shape of DT_RESOURCE input `index` (up to `max_rank` dims into
// `dims`); returns its rank, or -1 with `status` set.
int opkit_tf_resource_input_shape(TF_OpKernelContext* ctx, int index,
                                  int64_t* dims, int max_rank,
                                  TF_Status* status) {
  const tensorflow::Tensor& input = context(ctx)->input(index);
  if (input.dtype() != tensorflow::DT_RESOURCE) {
    TF_SetStatus(status, TF_INTERNAL, "the input is not a resource tensor");
    return -1;
  }
  int rank = input.dims();
  if (rank > max_rank) {
    TF_SetStatus(status, TF_UNIMPLEMENTED,
                 "a resource tensor of this rank is not supported");
    return -1;
  }
  for (int d = 0; d < rank; ++d) dims[d] = input.dim_size(d);
  return rank;
}

// Element `element` of DT_RESOURCE input `index` (in range), seen from
// `library`. The view's strings and payload live as long as the input.
void opkit_tf_resource_input_element(TF_OpKernelContext* ctx, int index,
                                     int64_t element, const void* library,
                                     OpkitHandleView* view) {
  const ResourceHandle& handle =
      context(ctx)->input(index).flat<ResourceHandle>()(element);
  view->payload = nullptr;
  view->container = handle.container().data();
  view->container_len = handle.container().size();
  view->name = handle.name().data();
  view->name_len = handle.name().size();
  view->type_name = handle.maybe_type_name().data();
  view->type_name_len = handle.maybe_type_name().size();
  if (!handle.IsRefCounting()) {
    view->kind = 1;
    return;
  }
  view->kind = 2;
  if (handle.ValidateType<RustResource>().ok()) {
    auto* resource = static_cast<RustResource*>(handle.resource().get());
    if (resource->library_ == library) {
      view->kind = 0;
      view->payload = resource->payload_;
    }
  }
}

// Allocates output `index`, a DT_RESOURCE tensor of the given shape whose
// handles the two setters below fill.
void opkit_tf_allocate_resource_output(TF_OpKernelContext* ctx, int index,
                                       const int64_t* dims, int rank,
                                       TF_Status* status) {
  tensorflow::TensorShape shape;
  for (int d = 0; d < rank; ++d) {
    absl::Status s = shape.AddDimWithStatus(dims[d]);
    if (!s.ok()) return set_status(status, s);
  }
  tensorflow::Tensor* output = nullptr;
  tensorflow::AllocatorAttributes host;
  host.set_on_host(true);
  set_status(status,
             context(ctx)->allocate_output(index, shape, &output, host));
}

// Sets a handle of output `index` to one that owns `payload` for
// `library`: TensorFlow ref-counts it and calls `drop(payload)` when the
// last handle goes. `type_name` is the Rust resource's type, for
// TensorFlow's messages.
void opkit_tf_set_owning_handle(TF_OpKernelContext* ctx, int index,
                                int64_t element, const void* library,
                                void* payload, OpkitDrop drop,
                                const char* type_name, size_t type_name_len) {
  std::string type = text(type_name, type_name_len);
  auto* resource = new RustResource(library, payload, drop, type);
  ResourceHandle handle = ResourceHandle::MakeRefCountingHandle(
      resource, context(ctx)->device()->name());
  handle.set_maybe_type_name(type);
  output_handle(ctx, index, element) = std::move(handle);
}

// Sets a handle of output `index` to a named one (container and name in
// the library's resource manager), which owns nothing.
void opkit_tf_set_named_handle(TF_OpKernelContext* ctx, int index,
                               int64_t element, const char* container,
                               size_t container_len, const char* name,
                               size_t name_len, const char* type_name,
                               size_t type_name_len) {
  ResourceHandle handle;
  handle.set_device(context(ctx)->device()->name());
  handle.set_container(text(container, container_len));
  handle.set_name(text(name, name_len));
  handle.set_hash_code(tensorflow::TypeIndex::Make<RustResource>().hash_code());
  handle.set_maybe_type_name(text(type_name, type_name_len));
  output_handle(ctx, index, element) = std::move(handle);
}

// ---- Plain tensors without the C API's wrappers ----
//
// TF_GetInput and TF_AllocateOutput each allocate a TF_Tensor wrapper (two
// heap objects) that the caller then frees: four allocations and four frees
// per one-input, one-output call. These two read the same facts straight
// from the context. Used wherever the shim is loaded; the C API otherwise.

// The most dims a view holds; a tensor of higher rank takes the C API.
#define OPKIT_VIEW_RANK 8

// What a library reads of a plain input, or of an output it allocated.
struct OpkitTensorView {
  int32_t dtype;
  int32_t rank;
  int64_t dims[OPKIT_VIEW_RANK];
  void* data;
  size_t bytes;
};

// The tensor's buffer, as TF_TensorData and TF_TensorByteSize give it (a
// string tensor's holds its tstrings; `tensor_data()` is for plain types
// only).
static void fill_buffer(const tensorflow::Tensor& tensor,
                        OpkitTensorView* view) {
  bool empty = tensor.NumElements() == 0;
  view->data = empty ? nullptr : tensor.data();
  view->bytes = empty ? 0 : tensor.GetBufferSize();
}

// sizeof(OpkitTensorView), for the Rust side's layout check.
size_t opkit_tf_shim_tensor_view_size() { return sizeof(OpkitTensorView); }

// Input `index` (a plain input, not a ref one, of rank at most 8) as a
// view of the context's own tensor; returns 0, writing nothing, for
// another input (the caller uses TF_GetInput).
int32_t opkit_tf_input_view(TF_OpKernelContext* ctx, int index,
                            OpkitTensorView* view) {
  OpKernelContext* c = context(ctx);
  if (c->input_is_ref(index)) return 0;
  const tensorflow::Tensor& input = c->input(index);
  if (input.dims() > OPKIT_VIEW_RANK) return 0;
  view->dtype = static_cast<int32_t>(input.dtype());
  view->rank = input.dims();
  for (int d = 0; d < input.dims(); ++d) view->dims[d] = input.dim_size(d);
  fill_buffer(input, view);
  return 1;
}

// Allocates output `index` in this shape (its dtype is the node's) and
// gives its buffer in `view`; `status` says why not.
void opkit_tf_allocate_output_view(TF_OpKernelContext* ctx, int index,
                                   const int64_t* dims, int rank,
                                   OpkitTensorView* view, TF_Status* status) {
  tensorflow::TensorShape shape;
  for (int d = 0; d < rank; ++d) {
    absl::Status s = shape.AddDimWithStatus(dims[d]);
    if (!s.ok()) return set_status(status, s);
  }
  tensorflow::Tensor* output = nullptr;
  absl::Status s = context(ctx)->allocate_output(index, shape, &output);
  if (!s.ok()) return set_status(status, s);
  view->dtype = static_cast<int32_t>(output->dtype());
  view->rank = rank;
  fill_buffer(*output, view);
}

// ---- The CUDA stream of a GPU kernel ----
//
// TF_GetStream answers only for pluggable devices ("Accessing device
// stream is only supported for pluggable devices"); TensorFlow's own GPU
// device keeps its compute stream in the C++ device context. Both functions
// return the raw CUstream (as the stream's platform handle gives it), or
// null where there is none (a CPU kernel, a device without streams).

static void* raw_stream(stream_executor::Stream* stream) {
  return stream == nullptr ? nullptr
                           : stream->platform_specific_handle().stream;
}

// The stream of the device a kernel is being constructed for (the device's
// default compute stream: where its GPU lives).
void* opkit_tf_construction_stream(TF_OpKernelConstruction* ctx) {
  auto* construction = reinterpret_cast<tensorflow::OpKernelConstruction*>(ctx);
  const auto* info = construction->device()->tensorflow_accelerator_device_info();
  return info == nullptr ? nullptr : raw_stream(info->stream);
}

// The stream this call of a kernel is ordered on.
void* opkit_tf_compute_stream(TF_OpKernelContext* ctx) {
  tensorflow::DeviceContext* device = context(ctx)->op_device_context();
  return device == nullptr ? nullptr : raw_stream(device->stream());
}

}  // extern "C"
