{
  "targets": [
    {
      "target_name": "exocortex_native",
      "sources": ["native/vault_native.cc"],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
      "defines": ["NAPI_VERSION=8", "NAPI_DISABLE_CPP_EXCEPTIONS", "_GNU_SOURCE"],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions"],
      "cflags_cc": ["-std=c++17", "-O2", "-Wall"]
    }
  ]
}
