// Shared pieces of the native fs core: statx → JS conversion, readlink, and the Call base that runs either
// on the libuv pool (a Promise) or inline (a value), failing with Node-style errors (code, errno, syscall, path).
#pragma once
#include <napi.h>
#include <uv.h>
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <linux/openat2.h>
#include <memory>
#include <string>
#include <vector>

#ifndef STATX_MNT_ID
#define STATX_MNT_ID 0x00001000U
#endif
#ifndef STATX_MNT_ID_UNIQUE
#define STATX_MNT_ID_UNIQUE 0x00004000U
#endif
#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif
#ifndef F_SETLEASE
#define F_SETLEASE 1024
#endif
#include <signal.h>
#ifndef AT_EMPTY_PATH
#define AT_EMPTY_PATH 0x1000
#endif

namespace exo {


struct StatOut {
  uint32_t mask = 0;
  uint32_t mode = 0;
  uint64_t size = 0, ino = 0, nlink = 0, mnt_id = 0, dev_major = 0, dev_minor = 0;
  double mtime_ms = 0, ctime_ms = 0;
};

inline int DoStatx(int dirfd, const char* path, int flags, unsigned mask, StatOut* out) {
  struct statx sx;
  memset(&sx, 0, sizeof sx);
  if (statx(dirfd, path, flags, mask, &sx) != 0) return errno;
  out->mask = sx.stx_mask;
  out->mode = sx.stx_mode;
  out->size = sx.stx_size;
  out->ino = sx.stx_ino;
  out->nlink = sx.stx_nlink;
  out->mnt_id = sx.stx_mnt_id;
  out->dev_major = sx.stx_dev_major;
  out->dev_minor = sx.stx_dev_minor;
  out->mtime_ms = sx.stx_mtime.tv_sec * 1000.0 + sx.stx_mtime.tv_nsec / 1e6;
  out->ctime_ms = sx.stx_ctime.tv_sec * 1000.0 + sx.stx_ctime.tv_nsec / 1e6;
  return 0;
}

inline const char* KindOf(uint32_t mode) {
  switch (mode & S_IFMT) {
    case S_IFREG: return "file";
    case S_IFDIR: return "directory";
    case S_IFLNK: return "symlink";
    default: return "other";
  }
}

inline Napi::Object StatToJs(Napi::Env env, const StatOut& s) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("kind", KindOf(s.mode));
  o.Set("mode", s.mode);
  o.Set("mask", s.mask);
  o.Set("size", static_cast<double>(s.size));
  o.Set("ino", static_cast<double>(s.ino));
  o.Set("nlink", static_cast<double>(s.nlink));
  o.Set("mntId", static_cast<double>(s.mnt_id));
  o.Set("dev", std::to_string(s.dev_major) + ":" + std::to_string(s.dev_minor));
  o.Set("mtimeMs", s.mtime_ms);
  o.Set("ctimeMs", s.ctime_ms);
  return o;
}

inline int ReadLink(int dirfd, const char* path, std::string* out) {
  std::vector<char> buf(4096);
  ssize_t n = readlinkat(dirfd, path, buf.data(), buf.size());
  if (n < 0) return errno;
  out->assign(buf.data(), static_cast<size_t>(n));
  return 0;
}

inline Napi::Buffer<char> BytesToJs(Napi::Env env, const std::string& s) {
  return Napi::Buffer<char>::Copy(env, s.data(), s.size());
}

// One syscall bundle: Execute() makes the calls (on a libuv pool thread, or inline on the JS thread for
// the *Sync entry points) and records the first failure; Result() builds the JS value on the JS thread.
class Call {
 public:
  explicit Call(const char* syscall) : syscall_(syscall) {}
  virtual ~Call() = default;
  virtual void Execute() = 0;
  virtual Napi::Value Result(Napi::Env env) { return env.Undefined(); }
  bool Failed() const { return err_ != 0; }
  // A Node-style error: message "CODE: strerror, syscall 'path'", with code, errno, syscall and path set.
  Napi::Error ToError(Napi::Env env) const {
    const char* code = uv_err_name(-err_);
    std::string msg = std::string(code) + ": " + strerror(err_) + ", " + syscall_;
    if (!path_.empty()) msg += " '" + path_ + "'";
    Napi::Error e = Napi::Error::New(env, msg);
    e.Set("code", code);
    e.Set("errno", Napi::Number::New(env, -err_));
    e.Set("syscall", Napi::String::New(env, syscall_));
    if (!path_.empty()) e.Set("path", Napi::String::New(env, path_));
    return e;
  }

 protected:
  void Fail(int err, const char* syscall) {
    err_ = err;
    syscall_ = syscall;
  }
  std::string syscall_;
  std::string path_;
  int err_ = 0;
};

// Runs a Call on the libuv pool and settles a Promise with its result or its Node-style error.
class AsyncCall : public Napi::AsyncWorker {
 public:
  AsyncCall(Napi::Env env, std::unique_ptr<Call> call)
      : Napi::AsyncWorker(env), deferred_(Napi::Promise::Deferred::New(env)), call_(std::move(call)) {}
  Napi::Promise Start() {
    Queue();
    return deferred_.Promise();
  }

 protected:
  void Execute() override {
    call_->Execute();
    if (call_->Failed()) SetError("syscall failed");
  }
  void OnOK() override { deferred_.Resolve(call_->Result(Env())); }
  void OnError(const Napi::Error&) override { deferred_.Reject(call_->ToError(Env()).Value()); }

 private:
  Napi::Promise::Deferred deferred_;
  std::unique_ptr<Call> call_;
};

// Async: queue on the pool and return a Promise. Sync: run inline, return the value or throw the error.
inline Napi::Value Dispatch(const Napi::CallbackInfo& info, bool sync, Call* raw) {
  std::unique_ptr<Call> call(raw);
  Napi::Env env = info.Env();
  if (!sync) return (new AsyncCall(env, std::move(call)))->Start();
  call->Execute();
  if (call->Failed()) {
    call->ToError(env).ThrowAsJavaScriptException();
    return env.Undefined();
  }
  return call->Result(env);
}

}  // namespace exo
