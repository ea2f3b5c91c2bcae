// Exocortex native fs core: only the Linux syscalls Node lacks (openat2, O_TMPFILE publication by linkat,
// renameat2, statx with mount ids, *at directory calls, flock), and glibc's malloc_trim. Each call X is async on the libuv thread pool
// and returns a Promise; XSync makes the same calls on the calling thread and returns the value. Failures
// are Node-style errors (code, errno, syscall, path), rejected or thrown.
#include "worker.h"
#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace {

using namespace exo;

int ArgInt(const Napi::CallbackInfo& info, size_t i) { return info[i].As<Napi::Number>().Int32Value(); }
std::string ArgStr(const Napi::CallbackInfo& info, size_t i) { return info[i].As<Napi::String>().Utf8Value(); }

bool CheckArgs(const Napi::CallbackInfo& info, const char* types) {
  for (size_t i = 0; types[i]; i++) {
    bool ok = types[i] == 'n' ? info[i].IsNumber() : info[i].IsString();
    if (!ok) {
      Napi::TypeError::New(info.Env(), "bad argument types").ThrowAsJavaScriptException();
      return false;
    }
  }
  return true;
}

// openat2(dirfd, path, flags, mode, resolve) -> fd
class Openat2Op : public Call {
 public:
  Openat2Op(int dirfd, std::string path, int flags, int mode, int resolve)
      : Call("openat2"), dirfd_(dirfd), flags_(flags), mode_(mode), resolve_(resolve) { path_ = std::move(path); }
  void Execute() override {
    struct open_how how;
    memset(&how, 0, sizeof how);
    how.flags = static_cast<uint64_t>(static_cast<unsigned>(flags_)) | O_CLOEXEC;
    if ((flags_ & O_CREAT) || (flags_ & __O_TMPFILE) == __O_TMPFILE) how.mode = static_cast<uint64_t>(mode_);
    how.resolve = static_cast<uint64_t>(resolve_);
    long fd;
    int tries = 0;
    do { fd = syscall(SYS_openat2, dirfd_, path_.c_str(), &how, sizeof how); } while (fd < 0 && errno == EAGAIN && ++tries < 64);
    if (fd < 0) return Fail(errno, "openat2");
    fd_ = static_cast<int>(fd);
  }
  Napi::Value Result(Napi::Env env) override { return Napi::Number::New(env, fd_); }

 private:
  int dirfd_, flags_, mode_, resolve_, fd_ = -1;
};

// linkat(fd, oldpath, newdirfd, newpath): oldpath "" publishes an O_TMPFILE fd (AT_EMPTY_PATH, falling back
// to /proc/self/fd/N). Never replaces: an existing name gives EEXIST.
class LinkatOp : public Call {
 public:
  LinkatOp(int fd, std::string oldpath, int newdirfd, std::string newpath)
      : Call("linkat"), fd_(fd), old_(std::move(oldpath)), newdirfd_(newdirfd) { path_ = std::move(newpath); }
  void Execute() override {
    if (!old_.empty()) {
      if (linkat(fd_, old_.c_str(), newdirfd_, path_.c_str(), 0) != 0) Fail(errno, "linkat");
      return;
    }
    if (linkat(fd_, "", newdirfd_, path_.c_str(), AT_EMPTY_PATH) == 0) return;
    int err = errno;
    if (err != ENOENT && err != EPERM && err != EINVAL) return Fail(err, "linkat");
    std::string proc = "/proc/self/fd/" + std::to_string(fd_);
    if (linkat(AT_FDCWD, proc.c_str(), newdirfd_, path_.c_str(), AT_SYMLINK_FOLLOW) != 0) Fail(errno, "linkat");
    else via_proc_ = true;
  }
  Napi::Value Result(Napi::Env env) override { return Napi::String::New(env, via_proc_ ? "proc" : "empty_path"); }

 private:
  int fd_;
  std::string old_;
  int newdirfd_;
  bool via_proc_ = false;
};

// renameat2(olddirfd, oldpath, newdirfd, newpath, flags); flags 0 is a plain renameat (overwrite).
class RenameOp : public Call {
 public:
  RenameOp(int od, std::string op, int nd, std::string np, unsigned flags)
      : Call(flags ? "renameat2" : "renameat"), od_(od), op_(std::move(op)), nd_(nd), flags_(flags) { path_ = std::move(np); }
  void Execute() override {
    int r = flags_ ? renameat2(od_, op_.c_str(), nd_, path_.c_str(), flags_) : renameat(od_, op_.c_str(), nd_, path_.c_str());
    if (r != 0) Fail(errno, flags_ ? "renameat2" : "renameat");
  }

 private:
  int od_;
  std::string op_;
  int nd_;
  unsigned flags_;
};

// statx(dirfd, path, flags, mask) -> stat object (with mntId)
class StatxOp : public Call {
 public:
  StatxOp(int dirfd, std::string path, int flags, unsigned mask)
      : Call("statx"), dirfd_(dirfd), flags_(flags), mask_(mask) { path_ = std::move(path); }
  void Execute() override {
    int e = DoStatx(dirfd_, path_.c_str(), flags_, mask_, &st_);
    if (e) Fail(e, "statx");
  }
  Napi::Value Result(Napi::Env env) override { return StatToJs(env, st_); }

 private:
  int dirfd_, flags_;
  unsigned mask_;
  StatOut st_;
};

// inspect(dirfd, path, resolve): openat2(O_PATH|O_NOFOLLOW) + statx + readlink, without following a
// final symlink -> { ...stat, link?: Buffer }
class InspectOp : public Call {
 public:
  InspectOp(int dirfd, std::string path, int resolve)
      : Call("openat2"), dirfd_(dirfd), resolve_(resolve) { path_ = std::move(path); }
  void Execute() override {
    struct open_how how;
    memset(&how, 0, sizeof how);
    how.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC;
    how.resolve = static_cast<uint64_t>(resolve_);
    long fd;
    int tries = 0;
    do { fd = syscall(SYS_openat2, dirfd_, path_.c_str(), &how, sizeof how); } while (fd < 0 && errno == EAGAIN && ++tries < 64);
    if (fd < 0) return Fail(errno, "openat2");
    int f = static_cast<int>(fd);
    int e = DoStatx(f, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS | STATX_MNT_ID, &st_);
    if (!e && S_ISLNK(st_.mode)) { is_link_ = true; e = ReadLink(f, "", &link_); }
    close(f);
    if (e) Fail(e, is_link_ ? "readlinkat" : "statx");
  }
  Napi::Value Result(Napi::Env env) override {
    Napi::Object o = StatToJs(env, st_);
    if (is_link_) o.Set("link", BytesToJs(env, link_));
    return o;
  }

 private:
  int dirfd_, resolve_;
  StatOut st_;
  bool is_link_ = false;
  std::string link_;
};

class MkdiratOp : public Call {
 public:
  MkdiratOp(int dirfd, std::string name, int mode) : Call("mkdirat"), dirfd_(dirfd), mode_(mode) { path_ = std::move(name); }
  void Execute() override { if (mkdirat(dirfd_, path_.c_str(), static_cast<mode_t>(mode_)) != 0) Fail(errno, "mkdirat"); }

 private:
  int dirfd_, mode_;
};

class UnlinkatOp : public Call {
 public:
  UnlinkatOp(int dirfd, std::string name, int flags) : Call("unlinkat"), dirfd_(dirfd), flags_(flags) { path_ = std::move(name); }
  void Execute() override { if (unlinkat(dirfd_, path_.c_str(), flags_) != 0) Fail(errno, "unlinkat"); }

 private:
  int dirfd_, flags_;
};

class ReadlinkatOp : public Call {
 public:
  ReadlinkatOp(int dirfd, std::string name) : Call("readlinkat"), dirfd_(dirfd) { path_ = std::move(name); }
  void Execute() override { int e = ReadLink(dirfd_, path_.c_str(), &out_); if (e) Fail(e, "readlinkat"); }
  Napi::Value Result(Napi::Env env) override { return BytesToJs(env, out_); }

 private:
  int dirfd_;
  std::string out_;
};

// readdir(dirfd) -> [{ name: Buffer, kind, size, mtimeMs, ..., link?: Buffer }], entries lstat'ed via the
// directory fd (never by path), "." and ".." left out.
struct DirEntryOut {
  std::string name;
  StatOut st;
  bool ok = false;
  std::string link;
  bool is_link = false;
};

class ReaddirOp : public Call {
 public:
  ReaddirOp(int dirfd) : Call("readdir"), dirfd_(dirfd) {}
  void Execute() override {
    int dup_fd = fcntl(dirfd_, F_DUPFD_CLOEXEC, 0);
    if (dup_fd < 0) return Fail(errno, "fcntl");
    DIR* d = fdopendir(dup_fd);
    if (!d) { int e = errno; close(dup_fd); return Fail(e, "fdopendir"); }
    rewinddir(d);
    errno = 0;
    while (struct dirent* de = readdir(d)) {
      if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
      DirEntryOut out;
      out.name = de->d_name;
      out.ok = DoStatx(dirfd_, de->d_name, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &out.st) == 0;
      if (out.ok && S_ISLNK(out.st.mode)) out.is_link = ReadLink(dirfd_, de->d_name, &out.link) == 0;
      entries_.push_back(std::move(out));
      errno = 0;
    }
    int e = errno;
    closedir(d);
    if (e) Fail(e, "readdir");
  }
  Napi::Value Result(Napi::Env env) override {
    Napi::Array arr = Napi::Array::New(env);
    uint32_t i = 0;
    for (const auto& en : entries_) {
      if (!en.ok) continue;  // vanished between readdir and statx
      Napi::Object o = StatToJs(env, en.st);
      o.Set("name", BytesToJs(env, en.name));
      if (en.is_link) o.Set("link", BytesToJs(env, en.link));
      arr.Set(i++, o);
    }
    return arr;
  }

 private:
  int dirfd_;
  std::vector<DirEntryOut> entries_;
};

class FlockOp : public Call {
 public:
  FlockOp(int fd, int op) : Call("flock"), fd_(fd), op_(op) {}
  void Execute() override {
    int r;
    do { r = flock(fd_, op_); } while (r != 0 && errno == EINTR);
    if (r != 0) Fail(errno, "flock");
  }

 private:
  int fd_, op_;
};

// trimMemory() -> true when memory went back to the system. glibc keeps what threads freed in its arenas (V8's
// compiler zones, PGlite's start-up) and returns it only from the top of each heap; malloc_trim(0) releases
// every free page. Elsewhere (musl) it does nothing and says false. On the pool: it walks every arena.
class TrimOp : public Call {
 public:
  TrimOp() : Call("malloc_trim") {}
  void Execute() override {
#ifdef __GLIBC__
    released_ = malloc_trim(0) == 1;
#endif
  }
  Napi::Value Result(Napi::Env env) override { return Napi::Boolean::New(env, released_); }

 private:
  bool released_ = false;
};

// leaseProbe(fd) -> true when no open file description has the inode open for writing (a shared writable
// mmap included: it keeps its file open), false when one does. `fd` must be read-only. It takes a read lease
// (F_SETLEASE F_RDLCK, granted only while nobody has the inode open for writing) and drops it at once. The
// lease-break signal is pointed at SIGURG (ignored by default) so a writer opening in the microsecond the
// lease is held cannot raise SIGIO in Node. Fails (EACCES when the caller neither owns the file nor has
// CAP_LEASE, EINVAL where the filesystem has no leases) when the kernel cannot say.
class LeaseProbeOp : public Call {
 public:
  explicit LeaseProbeOp(int fd) : Call("fcntl"), fd_(fd) {}
  void Execute() override {
    if (fcntl(fd_, F_SETSIG, SIGURG) != 0) return Fail(errno, "fcntl");
    if (fcntl(fd_, F_SETLEASE, F_RDLCK) == 0) {
      fcntl(fd_, F_SETLEASE, F_UNLCK);
      free_ = true;
      return;
    }
    int e = errno;
    if (e == EAGAIN || e == EBUSY) { free_ = false; return; }
    Fail(e, "fcntl");
  }
  Napi::Value Result(Napi::Env env) override { return Napi::Boolean::New(env, free_); }

 private:
  int fd_;
  bool free_ = false;
};

// exchangeChecked(dirfd, tmp, name, expectIno, expected, oursIno) -> { status, reason?, leases }
// The checked replace's publish, in one call on one thread so that the instant it spans stays in
// microseconds: renameat2(tmp, name, RENAME_EXCHANGE) swaps the staged inode in; the inode swapped out (now
// at tmp) must be inode `expectIno` with exactly the bytes `expected` and nobody holding it open for writing
// (a read lease probe); otherwise the swap is undone and what came back out is checked to be `oursIno`.
// status: "ok" (tmp holds the checked incumbent), "restored" (swapped back; tmp holds ours), "kept" (swapped
// back, but tmp holds neither: an outside rename replaced ours in between), "gone" (the note vanished before
// the swap back; tmp holds the outside version). reason: replaced | changed | open_writer. leases: false
// when the kernel could not say whether a writer had the inode open.
class ExchangeCheckedOp : public Call {
 public:
  ExchangeCheckedOp(int dirfd, std::string tmp, std::string name, double ino, std::string expected, double ours)
      : Call("renameat2"), dirfd_(dirfd), tmp_(std::move(tmp)), ino_(static_cast<uint64_t>(ino)), expected_(std::move(expected)),
        ours_(static_cast<uint64_t>(ours)) { path_ = std::move(name); }
  void Execute() override {
    if (renameat2(dirfd_, tmp_.c_str(), dirfd_, path_.c_str(), RENAME_EXCHANGE) != 0) return Fail(errno, "renameat2");
    reason_ = Check();
    if (!reason_) { status_ = "ok"; return; }
    if (renameat2(dirfd_, tmp_.c_str(), dirfd_, path_.c_str(), RENAME_EXCHANGE) != 0) {
      if (errno == ENOENT) { status_ = "gone"; return; }
      return Fail(errno, "renameat2");
    }
    struct stat st;
    status_ = fstatat(dirfd_, tmp_.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) && st.st_ino == ours_ ? "restored" : "kept";
  }
  Napi::Value Result(Napi::Env env) override {
    Napi::Object o = Napi::Object::New(env);
    o.Set("status", status_);
    if (reason_) o.Set("reason", reason_);
    o.Set("leases", leases_);
    return o;
  }

 private:
  const char* Check() {
    int fd = openat(dirfd_, tmp_.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return "replaced";
    const char* why = Compare(fd);
    close(fd);
    return why;
  }
  const char* Compare(int fd) {
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_ino != ino_) return "replaced";
    if (fcntl(fd, F_SETSIG, SIGURG) == 0 && fcntl(fd, F_SETLEASE, F_RDLCK) == 0) fcntl(fd, F_SETLEASE, F_UNLCK);
    else if (errno == EAGAIN || errno == EBUSY) return "open_writer";
    else leases_ = false;
    if (static_cast<uint64_t>(st.st_size) != expected_.size()) return "changed";
    std::vector<char> buf(expected_.size() + 1);
    size_t got = 0;
    while (got < buf.size()) {
      ssize_t n = pread(fd, buf.data() + got, buf.size() - got, static_cast<off_t>(got));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    if (got != expected_.size() || memcmp(buf.data(), expected_.data(), got) != 0) return "changed";
    return nullptr;
  }
  int dirfd_;
  std::string tmp_;
  uint64_t ino_;
  std::string expected_;
  uint64_t ours_;
  const char* status_ = "";
  const char* reason_ = nullptr;
  bool leases_ = true;
};

Napi::Value Openat2(const Napi::CallbackInfo& info, bool sync) {
  if (!CheckArgs(info, "nsnnn")) return info.Env().Undefined();
  return Dispatch(info, sync, new Openat2Op(ArgInt(info, 0), ArgStr(info, 1), ArgInt(info, 2), ArgInt(info, 3), ArgInt(info, 4)));
}
Napi::Value Linkat(const Napi::CallbackInfo& info, bool sync) {
  if (!CheckArgs(info, "nsns")) return info.Env().Undefined();
  return Dispatch(info, sync, new LinkatOp(ArgInt(info, 0), ArgStr(info, 1), ArgInt(info, 2), ArgStr(info, 3)));
}
Napi::Value Renameat2(const Napi::CallbackInfo& info, bool sync) {
  if (!CheckArgs(info, "nsnsn")) return info.Env().Undefined();
  return Dispatch(info, sync, new RenameOp(ArgInt(info, 0), ArgStr(info, 1), ArgInt(info, 2), ArgStr(info, 3),
                       static_cast<unsigned>(ArgInt(info, 4))));
}
Napi::Value Statx(const Napi::CallbackInfo& info, bool sync) {
  if (!CheckArgs(info, "nsnn")) return info.Env().Undefined();
  return Dispatch(info, sync, new StatxOp(ArgInt(info, 0), ArgStr(info, 1), ArgInt(info, 2), static_cast<unsigned>(ArgInt(info, 3))));
}
Napi::Value Inspect(const Napi::CallbackInfo& info, bool sync) {
  if (!CheckArgs(info, "nsn")) return info.Env().Undefined();
  return Dispatch(info, sync, new InspectOp(ArgInt(info, 0), ArgStr(info, 1), ArgInt(info, 2)));
}
Napi::Value Mkdirat(const Napi::CallbackInfo& info, bool sync) {
  if (!CheckArgs(info, "nsn")) return info.Env().Undefined();
  return Dispatch(info, sync, new MkdiratOp(ArgInt(info, 0), ArgStr(info, 1), ArgInt(info, 2)));
}
Napi::Value Unlinkat(const Napi::CallbackInfo& info, bool sync) {
  if (!CheckArgs(info, "nsn")) return info.Env().Undefined();
  return Dispatch(info, sync, new UnlinkatOp(ArgInt(info, 0), ArgStr(info, 1), ArgInt(info, 2)));
}
Napi::Value Readlinkat(const Napi::CallbackInfo& info, bool sync) {
  if (!CheckArgs(info, "ns")) return info.Env().Undefined();
  return Dispatch(info, sync, new ReadlinkatOp(ArgInt(info, 0), ArgStr(info, 1)));
}
Napi::Value Readdir(const Napi::CallbackInfo& info, bool sync) {
  if (!CheckArgs(info, "n")) return info.Env().Undefined();
  return Dispatch(info, sync, new ReaddirOp(ArgInt(info, 0)));
}
Napi::Value ExchangeChecked(const Napi::CallbackInfo& info, bool sync) {
  if (!CheckArgs(info, "nssn") || !info[4].IsBuffer() || !info[5].IsNumber()) {
    if (!info.Env().IsExceptionPending()) Napi::TypeError::New(info.Env(), "bad argument types").ThrowAsJavaScriptException();
    return info.Env().Undefined();
  }
  Napi::Buffer<char> expected = info[4].As<Napi::Buffer<char>>();
  return Dispatch(info, sync, new ExchangeCheckedOp(ArgInt(info, 0), ArgStr(info, 1), ArgStr(info, 2),
                       info[3].As<Napi::Number>().DoubleValue(), std::string(expected.Data(), expected.Length()), info[5].As<Napi::Number>().DoubleValue()));
}
Napi::Value LeaseProbe(const Napi::CallbackInfo& info, bool sync) {
  if (!CheckArgs(info, "n")) return info.Env().Undefined();
  return Dispatch(info, sync, new LeaseProbeOp(ArgInt(info, 0)));
}
Napi::Value Flock(const Napi::CallbackInfo& info, bool sync) {
  if (!CheckArgs(info, "nn")) return info.Env().Undefined();
  return Dispatch(info, sync, new FlockOp(ArgInt(info, 0), ArgInt(info, 1)));
}

Napi::Value TrimMemory(const Napi::CallbackInfo& info) { return Dispatch(info, false, new TrimOp()); }

// preadNowait(fd, buffer, offset, length, position) -> bytes read, or -1 when the data is not all in the
// page cache yet (preadv2 RWF_NOWAIT gave EAGAIN) or the filesystem cannot say (EOPNOTSUPP): the caller then
// reads through the pool. Runs on the calling thread: a cached read copies memory and never waits on a disk.
// Like any pread it may return fewer bytes than asked before the end of the file (part of it cached).
Napi::Value PreadNowait(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 5 || !info[0].IsNumber() || !info[1].IsBuffer() || !info[2].IsNumber() || !info[3].IsNumber() || !info[4].IsNumber()) {
    Napi::TypeError::New(env, "bad argument types").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  Napi::Buffer<char> buf = info[1].As<Napi::Buffer<char>>();
  int64_t off = info[2].As<Napi::Number>().Int64Value();
  int64_t len = info[3].As<Napi::Number>().Int64Value();
  int64_t pos = info[4].As<Napi::Number>().Int64Value();
  if (off < 0 || len < 0 || pos < 0 || static_cast<uint64_t>(off + len) > buf.Length()) {
    Napi::RangeError::New(env, "read outside the buffer").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  struct iovec iov = {buf.Data() + off, static_cast<size_t>(len)};
  ssize_t n;
  do { n = preadv2(info[0].As<Napi::Number>().Int32Value(), &iov, 1, pos, RWF_NOWAIT); } while (n < 0 && errno == EINTR);
  if (n >= 0) return Napi::Number::New(env, static_cast<double>(n));
  if (errno == EAGAIN || errno == EOPNOTSUPP) return Napi::Number::New(env, -1);
  struct Failure : Call {
    Failure(int e) : Call("preadv2") { Fail(e, "preadv2"); }
    void Execute() override {}
  } failure(errno);
  failure.ToError(env).ThrowAsJavaScriptException();
  return env.Undefined();
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("openat2", Napi::Function::New(env, [](const Napi::CallbackInfo& i) { return Openat2(i, false); }));
  exports.Set("openat2Sync", Napi::Function::New(env, [](const Napi::CallbackInfo& i) { return Openat2(i, true); }));
  exports.Set("linkat", Napi::Function::New(env, [](const Napi::CallbackInfo& i) { return Linkat(i, false); }));
  exports.Set("linkatSync", Napi::Function::New(env, [](const Napi::CallbackInfo& i) { return Linkat(i, true); }));
  exports.Set("renameat2", Napi::Function::New(env, [](const Napi::CallbackInfo& i) { return Renameat2(i, false); }));
  exports.Set("renameat2Sync", Napi::Function::New(env, [](const Napi::CallbackInfo& i) { return Renameat2(i, true); }));
  exports.Set("statx", Napi::Function::New(env, [](const Napi::CallbackInfo& i) { return Statx(i, false); }));
  exports.Set("statxSync", Napi::Function::New(env, [](const Napi::CallbackInfo& i) { return Statx(i, true); }));
  exports.Set("inspect", Napi::Function::New(env, [](const Napi::CallbackInfo& i) { return Inspect(i, false); }));
  exports.Set("inspectSync", Napi::Function::New(env, [](const Napi::CallbackInfo& i) { return Inspect(i, true); }));
  exports.Set("mkdirat", Napi::Function::New(env, [](const Napi::CallbackInfo& i) { return Mkdirat(i, false); }));
  exports.Set("mkdiratSync", Napi::Function::New(env, [](const Napi::CallbackInfo& i) { return Mkdirat(i, true); }));
  exports.Set("unlinkat", Napi::Function::New(env, [](const Napi::CallbackInfo& i) { return Unlinkat(i, false); }));
  exports.Set("unlinkatSync", Napi::Function::New(env, [](const Napi::CallbackInfo& i) { return Unlinkat(i, true); }));
  exports.Set("readlinkat", Napi::Function::New(env, [](const Napi::CallbackInfo& i) { return Readlinkat(i, false); }));
  exports.Set("readlinkatSync", Napi::Function::New(env, [](const Napi::CallbackInfo& i) { return Readlinkat(i, true); }));
  exports.Set("readdir", Napi::Function::New(env, [](const Napi::CallbackInfo& i) { return Readdir(i, false); }));
  exports.Set("readdirSync", Napi::Function::New(env, [](const Napi::CallbackInfo& i) { return Readdir(i, true); }));
  exports.Set("flock", Napi::Function::New(env, [](const Napi::CallbackInfo& i) { return Flock(i, false); }));
  exports.Set("flockSync", Napi::Function::New(env, [](const Napi::CallbackInfo& i) { return Flock(i, true); }));
  exports.Set("exchangeChecked", Napi::Function::New(env, [](const Napi::CallbackInfo& i) { return ExchangeChecked(i, false); }));
  exports.Set("leaseProbeSync", Napi::Function::New(env, [](const Napi::CallbackInfo& i) { return LeaseProbe(i, true); }));
  exports.Set("preadNowait", Napi::Function::New(env, PreadNowait));
  exports.Set("trimMemory", Napi::Function::New(env, TrimMemory));
  Napi::Object c = Napi::Object::New(env);
  c.Set("O_RDONLY", Napi::Number::New(env, static_cast<double>(O_RDONLY)));
  c.Set("O_WRONLY", Napi::Number::New(env, static_cast<double>(O_WRONLY)));
  c.Set("O_RDWR", Napi::Number::New(env, static_cast<double>(O_RDWR)));
  c.Set("O_CREAT", Napi::Number::New(env, static_cast<double>(O_CREAT)));
  c.Set("O_EXCL", Napi::Number::New(env, static_cast<double>(O_EXCL)));
  c.Set("O_DIRECTORY", Napi::Number::New(env, static_cast<double>(O_DIRECTORY)));
  c.Set("O_NOFOLLOW", Napi::Number::New(env, static_cast<double>(O_NOFOLLOW)));
  c.Set("O_PATH", Napi::Number::New(env, static_cast<double>(O_PATH)));
  c.Set("O_TMPFILE", Napi::Number::New(env, static_cast<double>(O_TMPFILE)));
  c.Set("O_CLOEXEC", Napi::Number::New(env, static_cast<double>(O_CLOEXEC)));
  c.Set("RESOLVE_BENEATH", Napi::Number::New(env, static_cast<double>(RESOLVE_BENEATH)));
  c.Set("RESOLVE_NO_SYMLINKS", Napi::Number::New(env, static_cast<double>(RESOLVE_NO_SYMLINKS)));
  c.Set("RESOLVE_NO_MAGICLINKS", Napi::Number::New(env, static_cast<double>(RESOLVE_NO_MAGICLINKS)));
  c.Set("RESOLVE_NO_XDEV", Napi::Number::New(env, static_cast<double>(RESOLVE_NO_XDEV)));
  c.Set("RENAME_NOREPLACE", Napi::Number::New(env, static_cast<double>(RENAME_NOREPLACE)));
  c.Set("RENAME_EXCHANGE", Napi::Number::New(env, static_cast<double>(RENAME_EXCHANGE)));
  c.Set("AT_EMPTY_PATH", Napi::Number::New(env, static_cast<double>(AT_EMPTY_PATH)));
  c.Set("AT_SYMLINK_NOFOLLOW", Napi::Number::New(env, static_cast<double>(AT_SYMLINK_NOFOLLOW)));
  c.Set("AT_REMOVEDIR", Napi::Number::New(env, static_cast<double>(AT_REMOVEDIR)));
  c.Set("STATX_BASIC_STATS", Napi::Number::New(env, static_cast<double>(STATX_BASIC_STATS)));
  c.Set("STATX_MNT_ID", Napi::Number::New(env, static_cast<double>(STATX_MNT_ID)));
  c.Set("STATX_MNT_ID_UNIQUE", Napi::Number::New(env, static_cast<double>(STATX_MNT_ID_UNIQUE)));
  c.Set("LOCK_EX", Napi::Number::New(env, static_cast<double>(LOCK_EX)));
  c.Set("LOCK_NB", Napi::Number::New(env, static_cast<double>(LOCK_NB)));
  c.Set("LOCK_UN", Napi::Number::New(env, static_cast<double>(LOCK_UN)));
  exports.Set("constants", c);
  return exports;
}

}  // namespace

NODE_API_MODULE(exocortex_native, Init)
