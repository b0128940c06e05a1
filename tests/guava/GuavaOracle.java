// The real Guava BloomFilter, run by tests/guava/test_guava.py as the oracle bloomery's Guava
// interop is checked against. All cases of a mode run in one JVM: its start-up is the cost.
//
//   write CASES OUTDIR   CASES: one case a line, name TAB funnel TAB strategy (32|64) TAB n TAB
//                        fpp TAB insert_file TAB probe_file. Creates the filter, puts every key
//                        of insert_file and writes OUTDIR/name.guava (writeTo), name.answers
//                        (mightContain of each probe, 1 or 0), name.puts (put's result for each
//                        inserted key, 1 or 0) and name.stats (approximateElementCount TAB
//                        expectedFpp; "error" for a count Guava refuses to give).
//   read CASES DIR       readFrom DIR/name.bloomery with the case's funnel and writes
//                        DIR/name.bloomery.answers and .stats as above, or DIR/name.bloomery.error
//                        (the exception) when Guava refuses the stream.
//   shapes GRID OUT      GRID: lines n TAB fpp. Writes n TAB fpp TAB k TAB words TAB source for the
//                        filter create(stringFunnel, n, fpp) makes, or n TAB fpp TAB error TAB
//                        message when create refuses (IllegalArgumentException).
//
// Key files are UTF-8 lines; empty lines are skipped; the long and int funnels' lines are parsed
// with Long.parseLong and Integer.parseInt. Strategy 64 is the public create; 32 is
// MURMUR128_MITZ_32, reachable only through the package-private create(funnel, n, fpp, strategy).

import com.google.common.hash.BloomFilter;
import com.google.common.hash.Funnel;
import com.google.common.hash.Funnels;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;

public final class GuavaOracle {
  // A shape larger than this is not allocated by `shapes` (the test allocates no more either):
  // its k and word count come from Guava's own sizing methods instead ("formula" rows).
  private static final long MAX_ALLOCATED_WORDS = (64L << 20) / 8;

  public static void main(String[] args) throws Exception {
    if (args.length != 3) usage();
    Path a = Paths.get(args[1]);
    Path b = Paths.get(args[2]);
    switch (args[0]) {
      case "write": write(a, b); break;
      case "read": read(a, b); break;
      case "shapes": shapes(a, b); break;
      default: usage();
    }
  }

  private static void usage() {
    System.err.println("usage: GuavaOracle write CASES OUTDIR | read CASES DIR | shapes GRID OUT");
    System.exit(2);
  }

  @SuppressWarnings("unchecked")
  private static Funnel<Object> funnel(String name) {
    Funnel<?> f;
    switch (name) {
      case "string": f = Funnels.stringFunnel(StandardCharsets.UTF_8); break;
      case "chars": f = Funnels.unencodedCharsFunnel(); break;
      case "long": f = Funnels.longFunnel(); break;
      case "int": f = Funnels.integerFunnel(); break;
      default: throw new IllegalArgumentException("unknown funnel " + name);
    }
    return (Funnel<Object>) f;
  }

  private static List<Object> keys(String funnel, Path file) throws IOException {
    List<Object> keys = new ArrayList<>();
    for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
      if (line.isEmpty()) continue;
      if (funnel.equals("long")) keys.add(Long.parseLong(line));
      else if (funnel.equals("int")) keys.add(Integer.parseInt(line));
      else keys.add(line);
    }
    return keys;
  }

  // BloomFilter.create with MURMUR128_MITZ_32, through reflection.
  @SuppressWarnings("unchecked")
  private static BloomFilter<Object> createMitz32(Funnel<Object> f, long n, double fpp)
      throws Exception {
    Class<?> strategies = Class.forName("com.google.common.hash.BloomFilterStrategies");
    Object mitz32 = null;
    for (Object c : strategies.getEnumConstants()) {
      if (((Enum<?>) c).name().equals("MURMUR128_MITZ_32")) mitz32 = c;
    }
    Method create = BloomFilter.class.getDeclaredMethod("create", Funnel.class, long.class,
        double.class, Class.forName("com.google.common.hash.BloomFilter$Strategy"));
    create.setAccessible(true);
    try {
      return (BloomFilter<Object>) create.invoke(null, f, n, fpp, mitz32);
    } catch (InvocationTargetException e) {
      throw (Exception) e.getCause();
    }
  }

  private static String answers(BloomFilter<Object> filter, List<Object> probes) {
    StringBuilder out = new StringBuilder(probes.size() * 2);
    for (Object key : probes) out.append(filter.mightContain(key) ? "1\n" : "0\n");
    return out.toString();
  }

  private static String stats(BloomFilter<Object> filter) {
    String count;
    try {
      count = Long.toString(filter.approximateElementCount());
    } catch (RuntimeException e) {  // ArithmeticException when every bit is set
      count = "error";
    }
    return count + "\t" + Double.toString(filter.expectedFpp()) + "\n";
  }

  private static void write(Path cases, Path outDir) throws Exception {
    for (String line : Files.readAllLines(cases, StandardCharsets.UTF_8)) {
      if (line.isEmpty()) continue;
      String[] c = line.split("\t");
      String name = c[0];
      Funnel<Object> f = funnel(c[1]);
      long n = Long.parseLong(c[3]);
      double fpp = Double.parseDouble(c[4]);
      BloomFilter<Object> filter =
          c[2].equals("32") ? createMitz32(f, n, fpp) : BloomFilter.create(f, n, fpp);
      StringBuilder puts = new StringBuilder();
      for (Object key : keys(c[1], Paths.get(c[5]))) puts.append(filter.put(key) ? "1\n" : "0\n");
      try (OutputStream out =
          new BufferedOutputStream(Files.newOutputStream(outDir.resolve(name + ".guava")))) {
        filter.writeTo(out);
      }
      Files.writeString(outDir.resolve(name + ".puts"), puts);
      List<Object> probes = keys(c[1], Paths.get(c[6]));
      Files.writeString(outDir.resolve(name + ".answers"), answers(filter, probes));
      Files.writeString(outDir.resolve(name + ".stats"), stats(filter));
    }
  }

  private static void read(Path cases, Path dir) throws Exception {
    for (String line : Files.readAllLines(cases, StandardCharsets.UTF_8)) {
      if (line.isEmpty()) continue;
      String[] c = line.split("\t");
      String base = c[0] + ".bloomery";
      BloomFilter<Object> filter;
      try (InputStream in = new BufferedInputStream(Files.newInputStream(dir.resolve(base)))) {
        filter = BloomFilter.readFrom(in, funnel(c[1]));
      } catch (IOException | RuntimeException e) {
        String text = e.getClass().getName() + ": " + e.getMessage();
        if (e.getCause() != null) text += "\ncaused by " + e.getCause();
        Files.writeString(dir.resolve(base + ".error"), text + "\n");
        continue;
      }
      List<Object> probes = keys(c[1], Paths.get(c[6]));
      Files.writeString(dir.resolve(base + ".answers"), answers(filter, probes));
      Files.writeString(dir.resolve(base + ".stats"), stats(filter));
    }
  }

  // Keeps a stream's first 6 bytes (the header) and drops the rest.
  private static final class Header extends OutputStream {
    final byte[] bytes = new byte[6];
    int size = 0;

    @Override
    public void write(int b) {
      if (size < bytes.length) bytes[size] = (byte) b;
      size++;
    }
  }

  private static void shapes(Path grid, Path outFile) throws Exception {
    Method bitsOf =
        BloomFilter.class.getDeclaredMethod("optimalNumOfBits", long.class, double.class);
    Method hashesOf =
        BloomFilter.class.getDeclaredMethod("optimalNumOfHashFunctions", long.class, long.class);
    bitsOf.setAccessible(true);
    hashesOf.setAccessible(true);
    StringBuilder out = new StringBuilder();
    for (String line : Files.readAllLines(grid, StandardCharsets.UTF_8)) {
      if (line.isEmpty()) continue;
      String[] c = line.split("\t");
      long n = Long.parseLong(c[0]);
      double fpp = Double.parseDouble(c[1]);
      out.append(c[0]).append('\t').append(c[1]).append('\t');
      // Guava refuses a bad n or fpp, and a word count beyond an int, before it allocates; a
      // filter it would allocate beyond MAX_ALLOCATED_WORDS is taken from its sizing methods,
      // with the one check its constructor adds (k <= 255).
      if (n > 0 && fpp > 0 && fpp < 1) {
        long bits = (Long) bitsOf.invoke(null, n, fpp);
        long words = (bits + 63) / 64;
        if (words > MAX_ALLOCATED_WORDS && words <= Integer.MAX_VALUE) {
          int k = (Integer) hashesOf.invoke(null, n, bits);
          if (k > 255) out.append("error\tnumHashFunctions (" + k + ") must be <= 255 (formula)\n");
          else out.append(k).append('\t').append(words).append("\tformula\n");
          continue;
        }
      }
      try {
        Header header = new Header();
        BloomFilter.create(funnel("string"), n, fpp).writeTo(header);
        int k = header.bytes[1] & 0xff;
        int w = ((header.bytes[2] & 0xff) << 24) | ((header.bytes[3] & 0xff) << 16)
            | ((header.bytes[4] & 0xff) << 8) | (header.bytes[5] & 0xff);
        out.append(k).append('\t').append(w).append("\tstream\n");
      } catch (IllegalArgumentException e) {
        String message = String.valueOf(e.getMessage()).replace('\n', ' ');
        out.append("error\t").append(message).append('\n');
      }
    }
    Files.writeString(outFile, out);
  }
}
