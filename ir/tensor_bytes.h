// The bytes of a tensor: a constant's data, a kernel's input or output.
//
// Tensor storage is `std::shared_ptr<const TensorBytes>` (ConstantNode,
// Tensor): a copy of a tensor copies a handle (O(1)), and what is shared is
// immutable by type. TensorBytes is not itself the handle because
// shared_ptr already gives everything a handle needs (an atomic count,
// weak_ptr for the Python bindings' registry of buffers handed out, custom
// deleters for the interpreter's pool of freed buffers) and because it
// keeps two forms apart by type: `const TensorBytes` to read, and
// `WritableTensorBytes`, the one a kernel writes its output into before it
// shares it as const.
//
// The bytes are either owned (a std::string adopted by move) or borrowed:
// memory PLIR did not allocate (a numpy array, a torch tensor, later a
// file mapping), valid as long as a keepalive object lives. Borrowed bytes
// are never written by PLIR: only WritableTensorBytes has a mutable_data(),
// and it is always owned.
#ifndef PLIR_IR_TENSOR_BYTES_H_
#define PLIR_IR_TENSOR_BYTES_H_

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace plir {

class TensorBytes {
 public:
  // No bytes.
  TensorBytes() : data_(owned_.data()) {}
  // Adopts `owned` (moved: its heap buffer becomes this one's, no copy).
  explicit TensorBytes(std::string owned)
      : owned_(std::move(owned)), data_(owned_.data()), size_(owned_.size()) {}
  // Borrows the `size` bytes at `data`, which must stay valid and unchanged
  // while `keepalive` lives; this object holds `keepalive` and releases it
  // when destroyed (on whatever thread drops the last reference). No bytes
  // (size 0) read as an empty string's, never as a null pointer.
  TensorBytes(const void* data, size_t size, std::shared_ptr<const void> keepalive)
      : data_(size ? static_cast<const char*>(data) : owned_.data()),
        size_(size),
        keepalive_(std::move(keepalive)),
        borrowed_(true) {}
  // data_ may point into owned_ (a short string lives inside it): the
  // object stays where it was made, behind its shared_ptr.
  TensorBytes(const TensorBytes&) = delete;
  TensorBytes& operator=(const TensorBytes&) = delete;
  ~TensorBytes() = default;

  const char* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::string_view view() const { return {data_, size_}; }
  const char* begin() const { return data_; }
  const char* end() const { return data_ + size_; }
  // True iff the bytes are memory PLIR did not allocate.
  bool borrowed() const { return borrowed_; }

  // Equal iff the contents are (where the bytes live does not matter).
  friend bool operator==(const TensorBytes& a, const TensorBytes& b) {
    return a.view() == b.view();
  }

 protected:
  std::string owned_;

 private:
  const char* data_;
  size_t size_ = 0;
  std::shared_ptr<const void> keepalive_;
  bool borrowed_ = false;
};

// Owned bytes that may be written until they are shared as const: what the
// tensor allocators (kernels/tensor.h) return.
class WritableTensorBytes final : public TensorBytes {
 public:
  explicit WritableTensorBytes(std::string owned) : TensorBytes(std::move(owned)) {}
  char* mutable_data() { return owned_.data(); }
};

// Owned bytes holding a copy of `bytes`.
inline std::shared_ptr<const TensorBytes> CopyTensorBytes(std::string_view bytes) {
  return std::make_shared<const TensorBytes>(std::string(bytes));
}

}  // namespace plir

#endif  // PLIR_IR_TENSOR_BYTES_H_
