// Guava's side of bench/guava/run.sh: reads a BloomFilter stream with readFrom and answers every
// key of a key file with mightContain, round after round in one JVM (the first rounds warm the JIT
// up; run.sh keeps the later ones). Prints one line per round: the stream read's time in
// microseconds, the queries' nanoseconds per key, and the number of positives.
// Usage: java -cp guava.jar:. GuavaBench STREAM string|long KEYFILE ROUNDS
import com.google.common.hash.BloomFilter;
import com.google.common.hash.Funnel;
import com.google.common.hash.Funnels;
import java.io.BufferedInputStream;
import java.io.FileInputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.List;

public class GuavaBench {
  public static void main(String[] args) throws Exception {
    String stream = args[0];
    boolean longs = args[1].equals("long");
    List<String> lines = Files.readAllLines(Paths.get(args[2]), StandardCharsets.UTF_8);
    int rounds = Integer.parseInt(args[3]);
    // Boxed once here, as a caller holding Longs would: the rounds time mightContain alone.
    Long[] numbers = new Long[lines.size()];
    if (longs) {
      for (int i = 0; i < numbers.length; i++) numbers[i] = Long.parseLong(lines.get(i));
    }
    String[] text = lines.toArray(new String[0]);
    for (int r = 0; r < rounds; r++) {
      long t0 = System.nanoTime();
      long positives = 0;
      long t1;
      if (longs) {
        BloomFilter<Long> f = read(stream, Funnels.longFunnel());
        t1 = System.nanoTime();
        for (Long k : numbers) if (f.mightContain(k)) positives++;
      } else {
        BloomFilter<CharSequence> f = read(stream, Funnels.stringFunnel(StandardCharsets.UTF_8));
        t1 = System.nanoTime();
        for (String k : text) if (f.mightContain(k)) positives++;
      }
      long t2 = System.nanoTime();
      System.out.printf("%.1f %.2f %d%n", (t1 - t0) / 1e3, (double) (t2 - t1) / lines.size(),
          positives);
    }
  }

  static <T> BloomFilter<T> read(String path, Funnel<? super T> funnel) throws Exception {
    try (InputStream in = new BufferedInputStream(new FileInputStream(path), 1 << 16)) {
      return BloomFilter.readFrom(in, funnel);
    }
  }
}
