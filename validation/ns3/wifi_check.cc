// wifi_check: the ns-3 side of ACP's cross-validation (docs/SIMULATOR.md, "Cross-validation
// against ns-3"). Built against Debian's libns3-dev (ns-3.37) by validation/ns3/build.sh.
//
// Network: n stations associated to one 802.11g access point (ERP-OFDM data at a constant rate,
// ConstantRateWifiManager; DCF unless --qos), log-distance path loss (exponent 3, ns-3's default
// reference loss of 46.6777 dB at 1 m unless --reference-loss), stations at the positions given
// in metres relative to the AP, no shadowing. No queue discs (the WiFi MAC queue and the
// point-to-point device queues are the only buffers) and static ARP tables (no ARP traffic).
//
// Modes:
//   saturation  every station sends UDP datagrams of --size bytes to the AP at --rate per
//               second (set it above the station's share); prints the goodput (UDP payload
//               bits delivered per second in the measurement window), the data frames the
//               stations put on the air and the ones acknowledged.
//   ages        every station sends periodic updates (--rate per second, --size bytes of UDP
//               payload) to a sink behind the AP across --hops point-to-point links
//               (--hop-rate, --hop-delay, --hop-queue); the sink computes each source's exact
//               time-average age from the generation time carried in the update. With
//               --ack-size B > 0 the sink answers every update with a B-byte UDP datagram
//               (as ACP's monitor does) and each source first sends one probe and waits for
//               its answer, as an ACP source with one probe and a fixed rate does.
// Both: --beacons=false turns the AP's beacons off (the stations then associate by active
// probing); --starts gives each station's start time (s) and --rates its rate (instead of --rate
// for all); the measurement window is
// [--warmup, --duration]. Output: one JSON object on stdout, with the wall time.

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/mobility-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"
#include "ns3/wifi-module.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

const uint16_t kPort = 9000;
// Update header carried at the front of every UDP payload: station, sequence, generation time.
const uint32_t kHeaderBytes = 16;

struct Point
{
    double x;
    double y;
};

// Parses the non-empty items of "a;b;..." with parse(item, value); exits with a message naming
// `what` on the first it rejects.
template <typename T, typename Parse>
std::vector<T>
ParseItems(const std::string& text, const char* what, Parse parse)
{
    std::vector<T> out;
    std::stringstream all(text);
    std::string item;
    while (std::getline(all, item, ';'))
    {
        T value;
        if (item.empty())
        {
            continue;
        }
        if (!parse(item, value))
        {
            std::cerr << "wifi_check: bad " << what << " '" << item << "'" << std::endl;
            std::exit(2);
        }
        out.push_back(value);
    }
    return out;
}

// Parses "x,y;x,y;..." into points.
std::vector<Point>
ParsePositions(const std::string& text)
{
    return ParseItems<Point>(text, "position (want x,y)", [](const std::string& item, Point& p) {
        char comma = 0;
        std::stringstream one(item);
        return (one >> p.x >> comma >> p.y) && comma == ',' && one.eof();
    });
}

// Parses "v;v;..." (non-negative numbers: start times in seconds, rates per second).
std::vector<double>
ParseList(const std::string& text)
{
    return ParseItems<double>(text, "number", [](const std::string& item, double& v) {
        char* end = nullptr;
        v = std::strtod(item.c_str(), &end);
        return *end == '\0' && v >= 0;
    });
}

void
WriteU32(uint8_t* p, uint32_t v)
{
    std::memcpy(p, &v, sizeof v);
}

void
WriteI64(uint8_t* p, int64_t v)
{
    std::memcpy(p, &v, sizeof v);
}

// The exact time-average age of one source at the sink over [from, to]: the integral of
// t - (generation time of the freshest update delivered by t).
struct AgeMeter
{
    int64_t from;
    int64_t to;
    int64_t freshest = -1; // generation time (ns) of the freshest update delivered
    int64_t since = 0;     // time up to which the integral is accounted
    long double integral = 0; // ns * ns
    uint64_t fresh_in_window = 0;
    uint64_t received_in_window = 0;

    void Advance(int64_t now)
    {
        if (freshest >= 0)
        {
            int64_t a = std::max(since, from);
            int64_t b = std::min(now, to);
            if (b > a)
            {
                long double mid = (static_cast<long double>(a) + b) / 2;
                integral += (b - a) * (mid - freshest);
            }
        }
        since = now;
    }

    void Deliver(int64_t now, int64_t gen)
    {
        bool inside = now >= from && now <= to;
        received_in_window += inside;
        if (gen > freshest)
        {
            Advance(now);
            freshest = gen;
            fresh_in_window += inside;
        }
    }

    double AgeSeconds()
    {
        return static_cast<double>(integral / (to - from)) / 1e9;
    }
};

// A station's update source: periodic UDP datagrams carrying (station, seq, generation time).
class UpdateSource : public Application
{
  public:
    void Configure(uint32_t station, Address sink, double rate, uint32_t size, bool probe)
    {
        m_station = station;
        m_sink = sink;
        m_period = Seconds(1.0 / rate);
        m_size = size;
        m_probe = probe;
    }

    uint64_t Acks() const
    {
        return m_acks;
    }

  private:
    void StartApplication() override
    {
        m_socket = Socket::CreateSocket(GetNode(), UdpSocketFactory::GetTypeId());
        m_socket->Bind();
        m_socket->Connect(m_sink);
        m_socket->SetRecvCallback(MakeCallback(&UpdateSource::Receive, this));
        m_start = Simulator::Now();
        Send();
        if (!m_probe)
        {
            m_next = Simulator::Schedule(m_period, &UpdateSource::Tick, this);
        }
    }

    void StopApplication() override
    {
        Simulator::Cancel(m_next);
        if (m_socket)
        {
            m_socket->Close();
        }
    }

    void Tick()
    {
        Send();
        m_next = Simulator::Schedule(m_period, &UpdateSource::Tick, this);
    }

    void Send()
    {
        std::vector<uint8_t> buf(m_size, 0);
        WriteU32(&buf[0], m_station);
        WriteU32(&buf[4], m_seq++);
        WriteI64(&buf[8], Simulator::Now().GetNanoSeconds());
        m_socket->Send(Create<Packet>(buf.data(), m_size));
    }

    // ACKs: the first one ends the probe; the periodic updates then follow the probe's send
    // time by whole periods, or start at once if the ACK came later than one period.
    void Receive(Ptr<Socket> socket)
    {
        while (socket->Recv())
        {
            ++m_acks;
            if (m_probe)
            {
                m_probe = false;
                Time first = m_start + m_period;
                Time wait = first > Simulator::Now() ? first - Simulator::Now() : Time(0);
                m_next = Simulator::Schedule(wait, &UpdateSource::Tick, this);
            }
        }
    }

    uint32_t m_station = 0;
    Address m_sink;
    Time m_period;
    uint32_t m_size = 0;
    bool m_probe = false;
    Ptr<Socket> m_socket;
    Time m_start;
    EventId m_next;
    uint32_t m_seq = 0;
    uint64_t m_acks = 0;
};

// The sink: per-source age meters, payload bytes in the window, optional ACKs.
class UpdateSink : public Application
{
  public:
    void Configure(uint32_t stations, Time from, Time to, uint32_t ackSize)
    {
        m_from = from.GetNanoSeconds();
        m_to = to.GetNanoSeconds();
        for (uint32_t i = 0; i < stations; ++i)
        {
            AgeMeter m;
            m.from = m_from;
            m.to = m_to;
            m_meters.push_back(m);
        }
        m_ackSize = ackSize;
    }

    std::vector<AgeMeter>& Meters()
    {
        return m_meters;
    }

    uint64_t PayloadBytesInWindow() const
    {
        return m_bytes;
    }

    // Closes every source's age integral at the end of the window.
    void Finish()
    {
        for (auto& m : m_meters)
        {
            m.Advance(m_to);
        }
    }

  private:
    void StartApplication() override
    {
        m_socket = Socket::CreateSocket(GetNode(), UdpSocketFactory::GetTypeId());
        m_socket->Bind(InetSocketAddress(Ipv4Address::GetAny(), kPort));
        m_socket->SetRecvCallback(MakeCallback(&UpdateSink::Receive, this));
    }

    void StopApplication() override
    {
        m_socket->Close();
    }

    void Receive(Ptr<Socket> socket)
    {
        Address from;
        while (Ptr<Packet> p = socket->RecvFrom(from))
        {
            int64_t now = Simulator::Now().GetNanoSeconds();
            if (p->GetSize() < kHeaderBytes)
            {
                continue;
            }
            uint8_t head[kHeaderBytes];
            p->CopyData(head, kHeaderBytes);
            uint32_t station;
            int64_t gen;
            std::memcpy(&station, head, 4);
            std::memcpy(&gen, head + 8, 8);
            if (station >= m_meters.size())
            {
                continue;
            }
            if (now >= m_from && now <= m_to)
            {
                m_bytes += p->GetSize();
            }
            m_meters[station].Deliver(now, gen);
            if (m_ackSize > 0)
            {
                socket->SendTo(Create<Packet>(m_ackSize), 0, from);
            }
        }
    }

    Ptr<Socket> m_socket;
    int64_t m_from = 0;
    int64_t m_to = 0;
    std::vector<AgeMeter> m_meters;
    uint64_t m_bytes = 0;
    uint32_t m_ackSize = 0;
};

// Data frames the stations put on the air and the ones acknowledged, inside the window.
struct MacCounters
{
    Time from;
    Time to;
    uint64_t attempts = 0;
    uint64_t acked = 0;
    uint64_t dropped = 0; // at the retry limit

    bool Inside() const
    {
        Time now = Simulator::Now();
        return now >= from && now <= to;
    }
};

void
OnPhyTxBegin(MacCounters* c, Ptr<const Packet> packet, double)
{
    WifiMacHeader hdr;
    if (c->Inside() && packet->PeekHeader(hdr) && hdr.IsData())
    {
        ++c->attempts;
    }
}

void
OnAcked(MacCounters* c, Ptr<const WifiMpdu> mpdu)
{
    if (c->Inside() && mpdu->GetHeader().IsData())
    {
        ++c->acked;
    }
}

void
OnDropped(MacCounters* c, WifiMacDropReason reason, Ptr<const WifiMpdu> mpdu)
{
    if (c->Inside() && reason == WIFI_MAC_DROP_REACHED_RETRY_LIMIT && mpdu->GetHeader().IsData())
    {
        ++c->dropped;
    }
}

} // namespace

int
main(int argc, char* argv[])
{
    auto wallStart = std::chrono::steady_clock::now();

    std::string mode = "saturation";
    std::string positionsText;
    std::string startsText;
    std::string ratesText;
    double rate = 0;
    uint32_t size = 1024;
    double duration = 10;
    double warmup = 2;
    double start = 1;
    uint32_t seed = 1;
    uint32_t run = 1;
    std::string wifiRate = "12";
    bool qos = false;
    double referenceLoss = 46.6777;
    double exponent = 3;
    std::string errorModel = "table";
    uint32_t wifiQueue = 500;
    uint32_t hops = 5;
    std::string hopRate = "6Mbps";
    double hopDelayMs = 0;
    uint32_t hopQueue = 100;
    uint32_t ackSize = 0;
    bool beacons = true;

    CommandLine cmd(__FILE__);
    cmd.AddValue("mode", "saturation | ages", mode);
    cmd.AddValue("positions", "station positions relative to the AP: x,y;x,y;... (m)",
                 positionsText);
    cmd.AddValue("starts", "each station's start time: t;t;... (s; default --start)", startsText);
    cmd.AddValue("start", "start time of every station without --starts (s)", start);
    cmd.AddValue("rate", "datagrams per second per station", rate);
    cmd.AddValue("rates", "each station's datagrams per second: r;r;... (default --rate)", ratesText);
    cmd.AddValue("size", "UDP payload bytes per datagram", size);
    cmd.AddValue("duration", "simulated time (s)", duration);
    cmd.AddValue("warmup", "measurements start here (s)", warmup);
    cmd.AddValue("seed", "RngSeedManager seed", seed);
    cmd.AddValue("run", "RngSeedManager run", run);
    cmd.AddValue("wifi-rate", "ERP-OFDM data rate (Mbit/s)", wifiRate);
    cmd.AddValue("qos", "QoS stations and AP (EDCA, best effort) instead of DCF", qos);
    cmd.AddValue("reference-loss", "log-distance loss at 1 m (dB)", referenceLoss);
    cmd.AddValue("exponent", "log-distance path-loss exponent", exponent);
    cmd.AddValue("error-model", "table (ns-3's default) | nist | yans", errorModel);
    cmd.AddValue("wifi-queue", "WifiMacQueue size (packets)", wifiQueue);
    cmd.AddValue("hops", "point-to-point links between the AP and the sink (ages)", hops);
    cmd.AddValue("hop-rate", "point-to-point data rate", hopRate);
    cmd.AddValue("hop-delay", "point-to-point propagation delay (ms)", hopDelayMs);
    cmd.AddValue("hop-queue", "point-to-point device queue (packets)", hopQueue);
    cmd.AddValue("ack-size", "ages: the sink answers each update with this many bytes (0: no)",
                 ackSize);
    cmd.AddValue("beacons",
                 "the AP sends beacons (without them the stations associate by active probing; "
                 "with many stations some may never associate: see associated_stations)",
                 beacons);
    cmd.Parse(argc, argv);

    auto fail = [](const std::string& msg) {
        std::cerr << "wifi_check: " << msg << std::endl;
        std::exit(2);
    };
    std::vector<Point> positions = ParsePositions(positionsText);
    uint32_t n = positions.size();
    if (n == 0)
    {
        fail("--positions names no station");
    }
    if (mode != "saturation" && mode != "ages")
    {
        fail("--mode must be saturation or ages");
    }
    // One value per station: the list if given, else `fallback` for every station.
    auto perStation = [&](const std::string& text, double fallback, const std::string& option) {
        std::vector<double> values = ParseList(text);
        if (values.empty())
        {
            values.assign(n, fallback);
        }
        if (values.size() != n)
        {
            fail(option + " must give one value per station");
        }
        return values;
    };
    std::vector<double> rates = perStation(ratesText, rate, "--rates");
    if (*std::min_element(rates.begin(), rates.end()) <= 0)
    {
        fail("rates must be positive (--rate or --rates)");
    }
    if (size < kHeaderBytes)
    {
        fail("--size must be at least 16 bytes (the update header)");
    }
    if (!(warmup >= 0 && warmup < duration))
    {
        fail("need 0 <= --warmup < --duration");
    }
    std::vector<double> starts = perStation(startsText, start, "--starts");
    if (mode == "ages" && hops == 0)
    {
        fail("--hops must be at least 1 in ages mode");
    }
    const std::string errorModels[] = {"table", "nist", "yans"};
    if (std::find(std::begin(errorModels), std::end(errorModels), errorModel) ==
        std::end(errorModels))
    {
        fail("--error-model must be table, nist or yans");
    }

    RngSeedManager::SetSeed(seed);
    RngSeedManager::SetRun(run);
    Config::SetDefault("ns3::WifiMacQueue::MaxSize",
                       QueueSizeValue(QueueSize(std::to_string(wifiQueue) + "p")));

    NodeContainer ap;
    ap.Create(1);
    NodeContainer stations;
    stations.Create(n);

    // WiFi.
    YansWifiChannelHelper channel;
    channel.SetPropagationDelay("ns3::ConstantSpeedPropagationDelayModel");
    channel.AddPropagationLoss("ns3::LogDistancePropagationLossModel",
                               "Exponent",
                               DoubleValue(exponent),
                               "ReferenceLoss",
                               DoubleValue(referenceLoss));
    YansWifiPhyHelper phy;
    phy.SetChannel(channel.Create());
    if (errorModel == "nist")
    {
        phy.SetErrorRateModel("ns3::NistErrorRateModel");
    }
    else if (errorModel == "yans")
    {
        phy.SetErrorRateModel("ns3::YansErrorRateModel");
    }
    WifiHelper wifi;
    wifi.SetStandard(WIFI_STANDARD_80211g);
    wifi.SetRemoteStationManager("ns3::ConstantRateWifiManager",
                                 "DataMode",
                                 StringValue("ErpOfdmRate" + wifiRate + "Mbps"));
    Ssid ssid("acp-check");
    WifiMacHelper mac;
    mac.SetType("ns3::StaWifiMac",
                "Ssid",
                SsidValue(ssid),
                "QosSupported",
                BooleanValue(qos),
                "ActiveProbing",
                BooleanValue(!beacons),
                "MaxMissedBeacons",
                UintegerValue(beacons ? 10 : std::numeric_limits<uint32_t>::max()));
    NetDeviceContainer staDevs = wifi.Install(phy, mac, stations);
    mac.SetType("ns3::ApWifiMac",
                "Ssid",
                SsidValue(ssid),
                "QosSupported",
                BooleanValue(qos),
                "BeaconGeneration",
                BooleanValue(beacons));
    NetDeviceContainer apDev = wifi.Install(phy, mac, ap);

    MobilityHelper mobility;
    Ptr<ListPositionAllocator> alloc = CreateObject<ListPositionAllocator>();
    alloc->Add(Vector(0, 0, 0));
    for (const auto& p : positions)
    {
        alloc->Add(Vector(p.x, p.y, 0));
    }
    mobility.SetPositionAllocator(alloc);
    mobility.SetMobilityModel("ns3::ConstantPositionMobilityModel");
    NodeContainer wireless(ap, stations);
    mobility.Install(wireless);

    // The point-to-point chain AP -> router ... -> sink (ages mode).
    NodeContainer chain;
    std::vector<NetDeviceContainer> hopDevs;
    if (mode == "ages")
    {
        chain.Create(hops);
        PointToPointHelper p2p;
        p2p.SetDeviceAttribute("DataRate", StringValue(hopRate));
        p2p.SetChannelAttribute("Delay", TimeValue(MilliSeconds(hopDelayMs)));
        p2p.SetQueue("ns3::DropTailQueue<Packet>",
                     "MaxSize",
                     QueueSizeValue(QueueSize(std::to_string(hopQueue) + "p")));
        Ptr<Node> prev = ap.Get(0);
        for (uint32_t h = 0; h < hops; ++h)
        {
            hopDevs.push_back(p2p.Install(prev, chain.Get(h)));
            prev = chain.Get(h);
        }
    }

    InternetStackHelper internet;
    internet.Install(wireless);
    internet.Install(chain);
    Ipv4AddressHelper addr;
    addr.SetBase("10.1.0.0", "255.255.0.0");
    Ipv4InterfaceContainer apIf = addr.Assign(apDev);
    addr.Assign(staDevs);
    Ipv4InterfaceContainer lastIf;
    for (uint32_t h = 0; h < hopDevs.size(); ++h)
    {
        std::string base = "10.2." + std::to_string(h) + ".0";
        addr.SetBase(base.c_str(), "255.255.255.0");
        lastIf = addr.Assign(hopDevs[h]);
    }
    // Interfaces get their root queue discs when addressed; remove them.
    TrafficControlHelper tc;
    tc.Uninstall(staDevs);
    tc.Uninstall(apDev);
    for (auto& d : hopDevs)
    {
        tc.Uninstall(d);
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    NeighborCacheHelper().PopulateNeighborCache();

    // Applications.
    Time from = Seconds(warmup);
    Time to = Seconds(duration);
    Ptr<Node> sinkNode = mode == "ages" ? chain.Get(hops - 1) : ap.Get(0);
    Ipv4Address sinkAddr = mode == "ages" ? lastIf.GetAddress(1) : apIf.GetAddress(0);
    Ptr<UpdateSink> sink = CreateObject<UpdateSink>();
    sink->Configure(n, from, to, mode == "ages" ? ackSize : 0);
    sinkNode->AddApplication(sink);
    sink->SetStartTime(Seconds(0));
    std::vector<Ptr<UpdateSource>> sources;
    for (uint32_t i = 0; i < n; ++i)
    {
        Ptr<UpdateSource> src = CreateObject<UpdateSource>();
        src->Configure(i,
                       InetSocketAddress(sinkAddr, kPort),
                       rates[i],
                       size,
                       mode == "ages" && ackSize > 0);
        stations.Get(i)->AddApplication(src);
        src->SetStartTime(Seconds(starts[i]));
        src->SetStopTime(to);
        sources.push_back(src);
    }

    MacCounters counters;
    counters.from = from;
    counters.to = to;
    for (uint32_t i = 0; i < n; ++i)
    {
        Ptr<WifiNetDevice> dev = DynamicCast<WifiNetDevice>(staDevs.Get(i));
        dev->GetPhy()->TraceConnectWithoutContext("PhyTxBegin",
                                                  MakeBoundCallback(&OnPhyTxBegin, &counters));
        dev->GetMac()->TraceConnectWithoutContext("AckedMpdu",
                                                  MakeBoundCallback(&OnAcked, &counters));
        dev->GetMac()->TraceConnectWithoutContext("DroppedMpdu",
                                                  MakeBoundCallback(&OnDropped, &counters));
    }

    Simulator::Stop(to);
    auto runStart = std::chrono::steady_clock::now();
    Simulator::Run();
    auto runEnd = std::chrono::steady_clock::now();
    sink->Finish();

    double window = duration - warmup;
    std::printf("{\"mode\": \"%s\", \"stations\": %u, \"seed\": %u, \"run\": %u, ",
                mode.c_str(),
                n,
                seed,
                run);
    std::printf("\"duration_s\": %g, \"warmup_s\": %g, ", duration, warmup);
    std::printf("\"goodput_mbps\": %.6f, ", sink->PayloadBytesInWindow() * 8.0 / window / 1e6);
    std::printf("\"data_attempts\": %lu, \"data_acked\": %lu, \"data_dropped\": %lu, ",
                (unsigned long)counters.attempts,
                (unsigned long)counters.acked,
                (unsigned long)counters.dropped);
    double meanAge = 0;
    double fresh = 0;
    std::printf("\"age_ms\": [");
    auto& meters = sink->Meters();
    for (uint32_t i = 0; i < n; ++i)
    {
        double age = meters[i].AgeSeconds() * 1e3;
        meanAge += age / n;
        fresh += meters[i].fresh_in_window / window;
        std::printf("%s%.6f", i ? ", " : "", age);
    }
    std::printf("], \"mean_age_ms\": %.6f, \"fresh_rate_hz\": %.4f, ", meanAge, fresh);
    uint64_t acks = 0;
    for (auto& s : sources)
    {
        acks += s->Acks();
    }
    std::printf("\"acks_received\": %lu, ", (unsigned long)acks);
    uint32_t associated = 0;
    for (uint32_t i = 0; i < n; ++i)
    {
        Ptr<WifiNetDevice> dev = DynamicCast<WifiNetDevice>(staDevs.Get(i));
        associated += DynamicCast<StaWifiMac>(dev->GetMac())->IsAssociated();
    }
    std::printf("\"associated_stations\": %u, ", associated);
    double runWall = std::chrono::duration<double>(runEnd - runStart).count();
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count();
    std::printf("\"run_wall_s\": %.4f, \"wall_s\": %.4f}\n", runWall, wall);
    Simulator::Destroy();
    return 0;
}
